//! A started gateway (see `run::start`): what it runs, and its stop.

use std::sync::Arc;

/// A started gateway: its channels, runtime and background tasks.
pub struct Gateway {
    /// The agent runtime it runs.
    pub runtime: Arc<switchboard_runtime::Runtime>,
    /// The local channels, for embedders that write into them directly.
    pub hub: switchboard_channel_local::LocalHub,
    pub(crate) tasks: Vec<tokio::task::JoinHandle<()>>,
    pub(crate) fences: crate::cluster::Fences,
    /// The running channels (a reload adds and removes some).
    pub(crate) channels: crate::channels::ChannelSet,
    pub(crate) intake: Arc<dyn switchboard_core::Intake>,
    /// The lease keeper of each platform channel.
    pub(crate) keepers: std::collections::HashMap<String, tokio::task::JoinHandle<()>>,
    /// The cron scheduler (restarted when a reload changes the schedule).
    pub(crate) scheduler: tokio::task::JoinHandle<()>,
    /// The file a reload reads.
    pub(crate) config_path: std::path::PathBuf,
}

impl Gateway {
    /// Stop every background task, give the channels up and close the store.
    pub async fn stop(self) {
        for t in self.tasks.iter().chain(self.keepers.values()).chain([&self.scheduler]) {
            t.abort();
        }
        self.runtime.core().mcp().shutdown().await;
        // Sends the spans left; blocking, so off the async threads.
        let _ = tokio::task::spawn_blocking(crate::trace_export::flush_traces).await;
        crate::cluster::release_all(self.runtime.store(), &self.fences).await;
        if let Err(e) = self.runtime.store().unregister_instance().await {
            tracing::warn!(error = %e, "cannot unregister this process");
        }
        self.runtime.store().close().await;
    }
}
