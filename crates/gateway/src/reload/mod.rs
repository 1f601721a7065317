//! Applying a changed configuration file to a running gateway (SIGHUP or
//! `switchboard reload`; docs/operations.md). The file is read and
//! validated first: an invalid one changes nothing and the log says why.
//! Then the adapters that must start are built (a missing secret stops
//! the reload here, still with nothing changed), the runtime's rules are
//! replaced (agents, risk profiles and approval routes, allow lists,
//! providers, limits), the channels whose connection changed are stopped,
//! started or restarted — the others keep their connection — and the cron
//! scheduler restarts when the schedule changed. Runs and the approvals
//! they wait for keep the rules they started with. What only a restart
//! applies is kept as it was and named in the log.

mod plan;

use crate::gateway::Gateway;
use std::sync::Arc;
use switchboard_config::Config;
use switchboard_core::{Channel, Intake};
use switchboard_store::Store;

/// Run platform channel `ch` under its lease: the first look is awaited
/// (so a single gateway's channels are up when this returns), then one
/// every heartbeat.
pub(crate) async fn keep(
    ch: Arc<dyn Channel>,
    intake: &Arc<dyn Intake>,
    store: &Store,
    fences: &crate::cluster::Fences,
) -> tokio::task::JoinHandle<()> {
    let mut keeper = crate::cluster::Keeper::new(ch, intake.clone(), store.clone(), fences.clone());
    keeper.step().await;
    keeper.spawn()
}

impl Gateway {
    /// Apply the configuration file again (see the module doc); the
    /// outcome is logged.
    pub async fn reload(&mut self) {
        match self.try_reload().await {
            Ok(summary) => tracing::info!(changes = %summary, "configuration reloaded"),
            Err(e) => tracing::error!("configuration reload refused; nothing changed:\n{e:#}"),
        }
    }

    async fn try_reload(&mut self) -> anyhow::Result<String> {
        let bytes = std::fs::read(&self.config_path)
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", self.config_path.display()))?;
        let new = Config::load(&self.config_path).map_err(|e| anyhow::anyhow!("{e}"))?;
        let old = self.runtime.config();
        let (plan, merged) = plan::plan(&old, &new);
        if let Some(why) = crate::database_reach::refusal(&merged).await {
            anyhow::bail!("{why}");
        }
        // Everything that can fail is done before anything changes.
        let mut fresh = Vec::new();
        for name in plan.start.iter().chain(&plan.restart) {
            fresh.push(crate::adapters::build_one(&merged, name)?);
        }
        self.runtime
            .core()
            .apply(Arc::new(merged))
            .map_err(|e| anyhow::anyhow!("cannot prepare the agents' workspaces: {e}"))?;
        if !plan.changed.is_empty() {
            tracing::warn!(changed = ?plan.changed, "configuration changes being applied");
        }
        if !plan.fixed.is_empty() {
            tracing::warn!(
                settings = ?plan.fixed,
                "these settings changed in the file but apply only after a restart; they keep their running values"
            );
        }
        for name in &plan.stop {
            self.stop_keeper(name).await;
            if let Some(old) = self.channels.remove(name) {
                old.stop().await;
            }
            self.release(name).await;
        }
        for ch in fresh {
            // A restarted channel's replacement takes its sends at once
            // (no moment without the channel); the old one then stops.
            let name = ch.name().to_string();
            self.stop_keeper(&name).await;
            let old = self.channels.get(&name);
            self.channels.insert(ch.clone());
            if let Some(old) = old {
                old.stop().await;
                self.release(&name).await;
            }
            let keeper = keep(ch, &self.intake, self.runtime.store(), &self.fences).await;
            self.keepers.insert(name, keeper);
        }
        if plan.cron {
            self.scheduler.abort();
            self.scheduler = self.runtime.spawn_scheduler();
        }
        let digest = crate::config_digest::digest(&bytes);
        if let Err(e) = self.runtime.store().set_config_digest(&digest).await {
            tracing::warn!(error = %e, "cannot record the configuration's digest");
        }
        Ok(format!(
            "digest {digest}; channels started {:?}, stopped {:?}, restarted {:?}; cron {}; waiting for a restart {:?}",
            plan.start,
            plan.stop,
            plan.restart,
            if plan.cron { "rescheduled" } else { "unchanged" },
            plan.fixed
        ))
    }

    /// End `name`'s lease keeper, and wait until it has ended (it may be
    /// in the middle of taking the lease).
    async fn stop_keeper(&mut self, name: &str) {
        if let Some(k) = self.keepers.remove(name) {
            k.abort();
            let _ = k.await;
        }
    }

    /// Give `name`'s lease up (another instance may take it at once).
    async fn release(&mut self, name: &str) {
        let held = self.fences.forget(name);
        if let Some(generation) = held
            && let Err(e) = self.runtime.store().leases().release(name, generation).await
        {
            tracing::warn!(channel = %name, error = %e, "cannot release the channel's lease");
        }
    }
}
