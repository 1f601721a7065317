//! Keeping the inbox in order while the gateway runs: messages left
//! pending by a process that stopped are adopted and answered (at start,
//! and later when another process sharing the control plane dies), and
//! answered messages older than `[storage].inbox_retention_hours` are
//! deleted.

use super::Taken;
use crate::router::Router;
use std::sync::Arc;
use std::time::Duration;
use switchboard_store::{Store, StoreError};

/// How often answered messages are pruned.
const PRUNE_EVERY: Duration = Duration::from_secs(600);

/// Adopt the pending messages of processes that are gone.
pub async fn adopt(store: &Store) -> Result<Vec<Taken>, StoreError> {
    let rows = store.adopt_orphan_inbound().await?;
    Ok(rows
        .into_iter()
        .filter_map(|row| match Taken::recovered(row) {
            Ok(t) => Some(t),
            Err(e) => {
                tracing::error!(error = %e, "an inbox row cannot be read; skipped");
                None
            }
        })
        .collect())
}

/// Adopt every heartbeat, prune every `PRUNE_EVERY`, until aborted.
pub fn spawn(store: Store, router: Arc<Router>, retention_hours: u64) -> tokio::task::JoinHandle<()> {
    let retention_ms = i64::try_from(retention_hours.saturating_mul(3_600_000)).unwrap_or(i64::MAX);
    tokio::spawn(async move {
        let mut last_prune: Option<tokio::time::Instant> = None;
        loop {
            if last_prune.is_none_or(|t| t.elapsed() >= PRUNE_EVERY) {
                match store.prune_inbound(retention_ms).await {
                    Ok(0) => {}
                    Ok(n) => tracing::info!(rows = n, "answered inbox messages pruned"),
                    Err(e) => tracing::error!(error = %e, "cannot prune the inbox"),
                }
                last_prune = Some(tokio::time::Instant::now());
            }
            tokio::time::sleep(crate::instance::HEARTBEAT).await;
            match adopt(&store).await {
                Ok(pending) => router.resume(pending).await,
                Err(e) => tracing::error!(error = %e, "cannot adopt messages of stopped instances"),
            }
        }
    })
}
