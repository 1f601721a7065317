//! Wake-ups, so that nothing polls while nothing happens.
//!
//! Watchers (the outbox worker, the watchers of stops, pauses, child mail
//! and approval decisions made elsewhere) sleep until one of these wakes
//! them:
//! - in this process, the write itself: queuing an outbox row wakes the
//!   outbox worker, and [`Store::signal`] wakes the other watchers;
//! - across gateways sharing PostgreSQL, a `NOTIFY` sent by the writer and
//!   received by every instance's `LISTEN` (see [`Store::spawn_listener`]),
//!   backed by a slow safety poll ([`Store::safety_poll`]) for a
//!   notification missed while a listener reconnected;
//! - on SQLite, while another process shares the file (`switchboard chat`
//!   beside `switchboard run`), SQLite's change counter (`PRAGMA
//!   data_version`), read at most once a second, and not at all when this
//!   process is alone.
//!
//! Within one process, every write of a run or an approval row is also
//! broadcast as a [`Change`] for live views (the operator console); a
//! subscriber that falls behind is told it lagged and re-reads.

use crate::{Pools, Store};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::sync::Notify;
use tokio::sync::futures::Notified;

/// The notification channel.
const CHANNEL: &str = "switchboard";
/// The payload that wakes outbox workers (any other wakes the watchers).
const OUTBOX: &str = "outbox";
/// How often watchers look without a signal, on PostgreSQL.
const SAFETY_POLL: Duration = Duration::from_secs(5);
/// How often SQLite's change counter is read while another process
/// shares the file.
const CHANGE_COUNTER_EVERY: Duration = Duration::from_secs(1);

/// Who waits for what (one per store and its clones).
#[derive(Default)]
pub(crate) struct Wakes {
    /// The outbox worker: a row was queued or became deliverable.
    outbox: Notify,
    /// The other watchers: a stop, a pause, child mail or a decision.
    signals: Notify,
    /// Whether another live process shares this database (see
    /// [`Store::note_peers`]).
    peers: AtomicBool,
    peers_changed: Notify,
}

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

    /// Tell every watcher, here and in the other gateways, that something
    /// they may wait on changed (call it after the write).
    pub async fn signal(&self) {
        self.wakes.signals.notify_waiters();
        self.notify_others("").await;
    }

    /// Resolves at the next signal (the future registers when created:
    /// create it before reading what it guards).
    pub fn signalled(&self) -> Notified<'_> {
        self.wakes.signals.notified()
    }

    /// Resolves when an outbox row may have become deliverable after this
    /// call (the future registers at creation, before it is first polled).
    pub fn outbox_queued(&self) -> Notified<'_> {
        self.wakes.outbox.notified()
    }

    /// Wake this process's outbox worker (a row was queued here, or the
    /// channels it delivers for changed).
    pub fn wake_outbox(&self) {
        self.wakes.outbox.notify_waiters();
    }

    /// Wake the outbox workers of the other gateways (a row was queued
    /// here for a channel another may run).
    pub(crate) async fn wake_other_outboxes(&self) {
        self.notify_others(OUTBOX).await;
    }

    async fn notify_others(&self, payload: &str) {
        if let Pools::Postgres(p) = &self.pools
            && let Err(e) = sqlx::query("SELECT pg_notify($1, $2)")
                .bind(CHANNEL)
                .bind(payload)
                .execute(p)
                .await
        {
            tracing::debug!(error = %e, "cannot notify the other gateways; they will see it when they poll");
        }
    }

    /// How long a watcher may sleep without a signal before it looks
    /// anyway: on PostgreSQL a notification can be missed while the
    /// listener reconnects; on SQLite every way in wakes it (see the
    /// module doc), so never.
    pub fn safety_poll(&self) -> Option<Duration> {
        match self.pools {
            Pools::Postgres(_) => Some(SAFETY_POLL),
            Pools::Sqlite { .. } => None,
        }
    }

    /// Wait for `woken` (made before reading what it guards) or for the
    /// safety poll, or at most `within` when given.
    pub async fn sleep_until(&self, woken: Notified<'_>, within: Option<Duration>) {
        let wait = match (self.safety_poll(), within) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        match wait {
            Some(d) => {
                tokio::select! {
                    () = woken => {}
                    () = tokio::time::sleep(d) => {}
                }
            }
            None => woken.await,
        }
    }

    /// Whether another live process shares this database; told by the
    /// heartbeat, which reads the instances anyway.
    pub fn note_peers(&self, others: bool) {
        if self.wakes.peers.swap(others, Ordering::Relaxed) != others {
            self.wakes.peers_changed.notify_waiters();
        }
    }

    /// Wake the watchers on the other processes' writes until the task is
    /// aborted: PostgreSQL `LISTEN`, or SQLite's change counter while
    /// another process shares the file.
    pub fn spawn_listener(&self) -> tokio::task::JoinHandle<()> {
        let wakes = self.wakes.clone();
        match &self.pools {
            Pools::Postgres(pool) => tokio::spawn(listen(pool.clone(), wakes)),
            Pools::Sqlite { path, .. } => tokio::spawn(watch_change_counter(path.clone(), wakes)),
        }
    }
}

async fn listen(pool: sqlx::PgPool, wakes: std::sync::Arc<Wakes>) {
    loop {
        match sqlx::postgres::PgListener::connect_with(&pool).await {
            Ok(mut listener) => match listener.listen(CHANNEL).await {
                Ok(()) => {
                    // Whatever was sent while (re)connecting is looked for.
                    wakes.signals.notify_waiters();
                    wakes.outbox.notify_waiters();
                    while let Ok(n) = listener.recv().await {
                        match n.payload() {
                            OUTBOX => wakes.outbox.notify_waiters(),
                            _ => wakes.signals.notify_waiters(),
                        }
                    }
                }
                Err(e) => tracing::warn!(error = %e, "cannot LISTEN for the other gateways' signals"),
            },
            Err(e) => tracing::warn!(error = %e, "cannot connect to LISTEN for the other gateways' signals"),
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// SQLite's `data_version` changes when another connection (another
/// process, or this one's writer) commits; read on a connection of its
/// own, once a second, only while another process is alive.
async fn watch_change_counter(path: String, wakes: std::sync::Arc<Wakes>) {
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
    // Opened when a peer first appears: a gateway alone holds none.
    let mut conn: Option<rusqlite::Connection> = None;
    let mut last: Option<i64> = None;
    loop {
        if !wakes.peers.load(Ordering::Relaxed) {
            let changed = wakes.peers_changed.notified();
            if !wakes.peers.load(Ordering::Relaxed) {
                changed.await;
            }
            // Whatever the other process wrote before we looked counts.
            last = None;
            wakes.signals.notify_waiters();
            wakes.outbox.notify_waiters();
        }
        tokio::time::sleep(CHANGE_COUNTER_EVERY).await;
        if conn.is_none() {
            match rusqlite::Connection::open_with_flags(&path, flags) {
                Ok(c) => conn = Some(c),
                Err(e) => {
                    tracing::warn!(error = %e, "cannot open the database to watch other processes' writes; trying again");
                    continue;
                }
            }
        }
        let Some(c) = &conn else { continue };
        match c.query_row("PRAGMA data_version", [], |r| r.get::<_, i64>(0)) {
            Ok(v) => {
                if last.is_some_and(|l| l != v) {
                    wakes.signals.notify_waiters();
                    wakes.outbox.notify_waiters();
                }
                last = Some(v);
            }
            Err(e) => tracing::debug!(error = %e, "cannot read SQLite's change counter"),
        }
    }
}
