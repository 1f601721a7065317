//! Wake-ups between gateways sharing a PostgreSQL control plane: after a
//! decision or a cancellation made for work another instance runs, the
//! writer sends a `NOTIFY`; every instance `LISTEN`s and wakes its
//! watchers at once. Watchers poll as well (a notification sent while a
//! listener reconnects is missed), so a signal only makes them faster. On
//! SQLite (one gateway) there is nothing to signal.
//!
//! Within one process, every write of a run or an approval row is also
//! broadcast as a [`Change`] for live views (the operator console); a
//! subscriber that falls behind is told it lagged and re-reads.

use crate::{Pools, Store};
use std::time::Duration;

/// The notification channel.
const CHANNEL: &str = "switchboard";

/// A row this process just wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Run `id` started, made progress or ended.
    Run(String),
    /// Approval request `id` was asked or ended.
    Approval(String),
    /// A person's turn in session `key` started or ended (told by the
    /// gateway, which runs turns; nothing is stored for them).
    Turn(String),
}

impl Store {
    /// Subscribe to this process's changes (see the module doc).
    pub fn changes(&self) -> tokio::sync::broadcast::Receiver<Change> {
        self.changes.subscribe()
    }

    /// Tell live views about `change` (nobody listening is fine).
    pub fn changed(&self, change: Change) {
        let _ = self.changes.send(change);
    }

    /// Tell the other gateways that something they may wait on changed.
    pub async fn signal(&self) {
        if let Pools::Postgres(p) = &self.pools
            && let Err(e) = sqlx::query("SELECT pg_notify('switchboard', '')").execute(p).await
        {
            tracing::debug!(error = %e, "cannot notify the other gateways; they will see it when they poll");
        }
    }

    /// Resolves at the next signal from any gateway (never on SQLite).
    pub fn signalled(&self) -> tokio::sync::futures::Notified<'_> {
        self.signals.notified()
    }

    /// Listen for signals (PostgreSQL only), reconnecting as needed, until
    /// the task is aborted.
    pub fn spawn_listener(&self) -> Option<tokio::task::JoinHandle<()>> {
        let Pools::Postgres(pool) = &self.pools else {
            return None;
        };
        let (pool, signals) = (pool.clone(), self.signals.clone());
        Some(tokio::spawn(async move {
            loop {
                match sqlx::postgres::PgListener::connect_with(&pool).await {
                    Ok(mut listener) => match listener.listen(CHANNEL).await {
                        Ok(()) => {
                            while listener.recv().await.is_ok() {
                                signals.notify_waiters();
                            }
                        }
                        Err(e) => tracing::warn!(error = %e, "cannot LISTEN for the other gateways' signals"),
                    },
                    Err(e) => tracing::warn!(error = %e, "cannot connect to LISTEN for the other gateways' signals"),
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }))
    }
}
