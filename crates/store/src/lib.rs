//! The control plane: everything that must survive a restart.
//!
//! One [`Store`] serves both SQLite (the embedded default) and PostgreSQL
//! (several gateways sharing one control plane) through sqlx's native
//! drivers. All SQL of the project lives in this crate; queries use `$N`
//! placeholders, which both backends accept, and each method's body is
//! written once and run against whichever pool is open (`read!`/`exec!`).
//! Migrations are kept as twins under `migrations/sqlite` and
//! `migrations/postgres`.

/// Run `$body` with `$p` bound to the pool that serves reads.
macro_rules! read {
    ($store:expr, |$p:ident| $body:expr) => {
        match &$store.pools {
            $crate::Pools::Sqlite { read: $p, .. } => $body,
            $crate::Pools::Postgres($p) => $body,
        }
    };
}

/// Execute the statement `$q` (built with `$p` in scope) as a write; yields
/// the number of rows affected. On SQLite it joins the group commit and
/// returns once committed.
macro_rules! exec {
    ($store:expr, |$p:ident| $q:expr) => {{
        $store.count_write();
        match &$store.pools {
            $crate::Pools::Sqlite { group, .. } => {
                let mut guard = group.lock().await?;
                let done = $q.execute(&mut **guard.tx()).await.map(|r| r.rows_affected());
                let epoch = guard.release();
                group.committed(epoch).await.and(done)
            }
            $crate::Pools::Postgres($p) => $q.execute($p).await.map(|r| r.rows_affected()),
        }
    }};
}

mod approvals;
mod cost;
mod cursors;
mod error;
mod group;
mod memory;
mod outbox;
mod runs;
mod sessions;

pub use approvals::{ApprovalRow, NewApproval};
pub use cost::{CostTotals, utc_day};
pub use error::StoreError;
pub use memory::MemoryRow;
pub use outbox::OutboxRow;
pub use runs::{NewRun, RunEnd, RunRow, RunStatus};
pub use sessions::{SessionInfo, StoredMessage};

use sqlx::migrate::Migrator;
use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous};
use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

static SQLITE_MIGRATIONS: Migrator = sqlx::migrate!("../../migrations/sqlite");
static POSTGRES_MIGRATIONS: Migrator = sqlx::migrate!("../../migrations/postgres");

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

#[derive(Clone)]
pub(crate) enum Pools {
    /// One writer connection (behind group commit) beside a read pool
    /// (see [`Store::open`]).
    Sqlite {
        read: SqlitePool,
        group: std::sync::Arc<group::GroupWriter>,
    },
    Postgres(PgPool),
}

/// A handle on the control-plane database; cheap to clone.
#[derive(Clone)]
pub struct Store {
    pools: Pools,
    writes: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// Woken when this process queues an announcement (other processes
    /// sharing a PostgreSQL control plane are found by polling).
    outbox_ready: std::sync::Arc<tokio::sync::Notify>,
}

impl Store {
    /// Open (creating if needed) and migrate the database at `url`:
    /// `sqlite://PATH` or `postgres://...`.
    ///
    /// SQLite allows one writer at a time; several pooled writers would
    /// contend on its file lock and back off in sleeps. So on SQLite all
    /// writes queue for one connection while reads use a pool of their own
    /// (WAL lets them run beside the writer).
    pub async fn open(url: &str) -> Result<Store, StoreError> {
        let (backend, url) = normalize_url(url)?;
        let failed = |e: sqlx::Error| StoreError::Connect(redact_url(&url), e.to_string());
        let pools = match backend {
            Backend::Sqlite => {
                let options = SqliteConnectOptions::from_str(&url)
                    .map_err(failed)?
                    .create_if_missing(true)
                    .journal_mode(SqliteJournalMode::Wal)
                    .synchronous(SqliteSynchronous::Normal)
                    .busy_timeout(Duration::from_secs(10))
                    // Statement journals inside the shared write transaction stay in
                    // memory instead of a temp file opened per statement.
                    .pragma("temp_store", "memory");
                let write = SqlitePoolOptions::new()
                    .max_connections(1)
                    .connect_with(options.clone())
                    .await
                    .map_err(failed)?;
                SQLITE_MIGRATIONS.run(&write).await?;
                let read = SqlitePoolOptions::new()
                    .max_connections(4)
                    .connect_with(options)
                    .await
                    .map_err(failed)?;
                Pools::Sqlite {
                    read,
                    group: group::GroupWriter::start(write),
                }
            }
            Backend::Postgres => {
                let pool = PgPoolOptions::new()
                    .max_connections(10)
                    .connect(&url)
                    .await
                    .map_err(failed)?;
                POSTGRES_MIGRATIONS.run(&pool).await?;
                Pools::Postgres(pool)
            }
        };
        Ok(Store {
            pools,
            writes: Default::default(),
            outbox_ready: Default::default(),
        })
    }

    pub fn backend(&self) -> Backend {
        match self.pools {
            Pools::Sqlite { .. } => Backend::Sqlite,
            Pools::Postgres(_) => Backend::Postgres,
        }
    }

    pub(crate) fn count_write(&self) {
        self.writes.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// Resolves when an announcement is queued by this process after this
    /// call (the future registers at creation, before it is first polled).
    pub fn outbox_queued(&self) -> tokio::sync::futures::Notified<'_> {
        self.outbox_ready.notified()
    }

    pub(crate) fn wake_outbox(&self) {
        self.outbox_ready.notify_waiters();
    }

    /// Write statements executed through this handle (and its clones).
    pub fn writes(&self) -> u64 {
        self.writes.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Close every connection (flushes SQLite's WAL).
    pub async fn close(&self) {
        match &self.pools {
            Pools::Sqlite { read, group } => {
                group.flush().await;
                read.close().await;
            }
            Pools::Postgres(p) => p.close().await,
        }
    }
}

/// Current time in Unix milliseconds.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn normalize_url(url: &str) -> Result<(Backend, String), StoreError> {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        return Ok((Backend::Postgres, url.to_string()));
    }
    let Some(rest) = url.strip_prefix("sqlite:") else {
        return Err(StoreError::BadUrl(redact_url(url)));
    };
    let path_part = rest.trim_start_matches("//");
    let (path, query) = path_part.split_once('?').unwrap_or((path_part, ""));
    if path != ":memory:"
        && let Some(parent) = Path::new(path).parent()
        && !parent.as_os_str().is_empty()
    {
        std::fs::create_dir_all(parent)
            .map_err(|e| StoreError::Connect(path.to_string(), format!("cannot create the folder: {e}")))?;
    }
    let query = if query.is_empty() {
        "mode=rwc".to_string()
    } else {
        query.to_string()
    };
    Ok((Backend::Sqlite, format!("sqlite://{path}?{query}")))
}

/// A URL with any password replaced, safe for logs and errors.
fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => {
            let creds = &url[s + 3..at];
            match creds.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..s + 3], &url[at..]),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_appear_in_errors() {
        assert_eq!(redact_url("postgres://u:secret@h/db"), "postgres://u:***@h/db");
        assert_eq!(redact_url("sqlite://data/x.db"), "sqlite://data/x.db");
    }
}
