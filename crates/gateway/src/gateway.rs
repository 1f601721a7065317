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
    pub(crate) router: Arc<crate::messages::router::Router>,
    /// What starts new turns besides the channels and cron: the router's
    /// inbound queue and the adoption of stopped instances' messages.
    pub(crate) takers: Vec<tokio::task::JoinHandle<()>>,
}

/// How long a stop lets running turns finish (a service manager's stop
/// timeout is longer: systemd's 90 s, Kubernetes' 30 s).
const DRAIN: Duration = Duration::from_secs(25);

impl Gateway {
    /// Stop: take no new work (the channels stop and their leases are
    /// released, so another instance runs them at its next look; cron and
    /// the router's queue stop), let the turns under way finish and send
    /// their answers for at most `DRAIN`, cut what is left, then stop
    /// every background task and close the store. Messages not answered
    /// are taken up by the next instance that looks (docs/operations.md,
    /// "Upgrades").
    pub async fn stop(self) {
        for k in self.keepers.values() {
            k.abort();
        }
        for ch in self.channels.all() {
            ch.stop().await;
        }
        crate::cluster::release_all(self.runtime.store(), &self.fences).await;
        for t in self.takers.iter().chain([&self.scheduler]) {
            t.abort();
        }
        self.drain().await;
        // What is left stops calling tools before others take it up.
        self.router.cancel_all_turns();
        for t in &self.tasks {
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

    /// Wait until no turn is in hand here, for at most `DRAIN`.
    async fn drain(&self) {
        let started = Instant::now();
        let running = self.router.turns_in_hand();
        if running == 0 {
            return;
        }
        tracing::info!(turns = running, "letting the turns under way finish before stopping");
        while self.router.turns_in_hand() > 0 {
            if started.elapsed() > DRAIN {
                tracing::warn!(
                    turns = self.router.turns_in_hand(),
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
