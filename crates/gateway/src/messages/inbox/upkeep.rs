//! Keeping the inbox in order while the gateway runs: messages left
//! pending by a process that stopped are adopted and answered (at start,
//! and later when another process sharing the control plane dies), and
//! answered messages older than `[storage].inbox_retention_hours` are
//! deleted.

use super::Taken;
use std::time::Duration;
use switchboard_config::Config;
use switchboard_store::{Store, StoreError};

/// How often answered messages are pruned.
const PRUNE_EVERY: Duration = Duration::from_secs(600);

/// Adopt the pending messages of processes that are gone; those whose
/// sender the configuration no longer allows are closed unanswered.
pub(crate) async fn adopt(store: &Store, config: &Config) -> Result<Vec<Taken>, StoreError> {
    let mut taken = Vec::new();
    for row in store.inbox().adopt_orphans().await? {
        let key = row.key.clone();
        match Taken::recovered(row, config) {
            Ok(t) if crate::messages::pairing::still_admitted(store, config, &t).await => taken.push(t),
            Ok(t) => {
                tracing::warn!(channel = %t.m.address.channel, sender = %t.m.sender, "a message taken before the restart is from a sender no longer allowed; not answered");
                store.inbox().finish(&key, None).await?;
            }
            Err(e) => {
                tracing::error!(error = %e, "an inbox row cannot be read; closed unanswered");
                store.inbox().finish(&key, None).await?;
            }
        }
    }
    Ok(taken)
}

/// Adopt every heartbeat, prune every `PRUNE_EVERY`, until aborted.
pub(crate) fn spawn(
    store: Store,
    config: crate::live_config::LiveConfig,
    resume: impl Fn(Vec<Taken>) -> futures::future::BoxFuture<'static, ()> + Send + 'static,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut last_prune: Option<tokio::time::Instant> = None;
        loop {
            let config = config.get();
            if last_prune.is_none_or(|t| t.elapsed() >= PRUNE_EVERY) {
                let retention_ms =
                    i64::try_from(config.storage.inbox_retention_hours.saturating_mul(3_600_000)).unwrap_or(i64::MAX);
                match store.inbox().prune(retention_ms).await {
                    Ok(0) => {}
                    Ok(n) => tracing::info!(rows = n, "answered inbox messages pruned"),
                    Err(e) => tracing::error!(error = %e, "cannot prune the inbox"),
                }
                last_prune = Some(tokio::time::Instant::now());
            }
            tokio::time::sleep(crate::cluster::instance::heartbeat()).await;
            match adopt(&store, &config).await {
                Ok(pending) => resume(pending).await,
                Err(e) => tracing::error!(error = %e, "cannot adopt messages of stopped instances"),
            }
        }
    })
}
