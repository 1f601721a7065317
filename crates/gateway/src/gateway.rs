//! A started gateway (see `run::start`): what it runs, and its stop.

use std::sync::Arc;
use std::time::{Duration, Instant};

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
    /// The chat router (its running turns are let finish at a stop).
    pub(crate) router: Arc<crate::service::router::Router>,
}

/// How long a stop lets running turns finish (a service manager's stop
/// timeout is longer: systemd's 90 s, Kubernetes' 30 s).
const DRAIN: Duration = Duration::from_secs(25);

impl Gateway {
    /// Stop: take no new messages (the channels stop and their leases
    /// are released, so another instance runs them at once), let the turns
    /// under way finish for at most `DRAIN` (their replies go out through
    /// the outbox, delivered by whoever runs the channel now), then stop
    /// every background task and close the store. What was cut is taken
    /// up by the next instance that looks (docs/operations.md, "Upgrades").
    pub async fn stop(self) {
        for k in self.keepers.values() {
            k.abort();
        }
        for ch in self.channels.all() {
            ch.stop().await;
        }
        crate::cluster::release_all(self.runtime.store(), &self.fences).await;
        self.drain().await;
        for t in self.tasks.iter().chain([&self.scheduler]) {
            t.abort();
        }
        self.runtime.core().mcp().shutdown().await;
        // Sends the spans left; blocking, so off the async threads.
        let _ = tokio::task::spawn_blocking(crate::trace_export::flush_traces).await;
        if let Err(e) = self.runtime.store().unregister_instance().await {
            tracing::warn!(error = %e, "cannot unregister this process");
        }
        self.runtime.store().close().await;
    }

    /// Wait until no turn runs here, for at most `DRAIN`.
    async fn drain(&self) {
        let started = Instant::now();
        let running = self.router.running_turns().len();
        if running == 0 {
            return;
        }
        tracing::info!(turns = running, "letting the turns under way finish before stopping");
        while !self.router.running_turns().is_empty() {
            if started.elapsed() > DRAIN {
                tracing::warn!(
                    turns = self.router.running_turns().len(),
                    "stopping with turns still under way: another instance takes their messages up again"
                );
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        tracing::info!(
            waited_ms = started.elapsed().as_millis() as u64,
            "the turns under way finished"
        );
    }
}
