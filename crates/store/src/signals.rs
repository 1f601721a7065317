//! Wake-ups between gateways sharing a PostgreSQL control plane: after a
//! decision or a cancellation made for work another instance runs, the
//! writer sends a `NOTIFY`; every instance `LISTEN`s and wakes its
//! watchers at once. Watchers poll as well (a notification sent while a
//! listener reconnects is missed), so a signal only makes them faster. On
//! SQLite (one gateway) there is nothing to signal.

use crate::{Pools, Store};
use std::time::Duration;

/// The notification channel.
const CHANNEL: &str = "switchboard";

impl Store {
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
