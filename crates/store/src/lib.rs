//! The control plane: everything that must survive a restart.
//!
//! One [`Store`] serves both SQLite (the embedded default) and PostgreSQL
//! (several gateways sharing one control plane) through sqlx's native
//! drivers. All SQL of the project lives in this crate; queries use `$N`
//! placeholders, which both backends accept, and each method's body is
//! written once and run against whichever backend is open (`read!` for
//! reads; writes are `Stmt` values, see `exec`).
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

#[macro_use]
mod stored_words;

mod approval_votes;
mod approvals;
mod backup;
mod clock;
mod console;
mod cost;
mod cursors;
mod delivered_marks;
mod error;
mod inbox;
mod instances;
mod leases;
mod list;
mod memory;
mod open_door;
mod outbox;
mod pairings;
mod peer_mail;
pub use open_door::open_without_password;
mod pg_hosts;
mod reach;
mod readiness;
mod runs;
mod schema;
mod sessions;
mod signals;
pub use signals::Change;
mod sqlite_read;
mod sqlite_writer;
#[cfg(test)]
mod stalled_transaction;
mod stmt;
mod summaries;

pub use approval_votes::{Allow, Counted, VoteRow};
pub use approvals::{ApprovalEnd, ApprovalRow, ApprovalStatus, NewApproval};
pub use backup::{BackupSummary, verify as verify_backup};
pub use console::{ConsoleSession, console_secret};
pub use cost::{CostTotals, utc_day};
pub use error::{StoreError, Unwritable};
pub use inbox::{InboxRow, NewInbound, QueuedReply, Took, reply_key};
pub use instances::{InstanceRow, Reclaimed};
pub use leases::LeaseRow;
pub use memory::MemoryRow;
pub use outbox::{OutboxRow, OutboxStatus};
pub use pairings::{NewPairing, Opened, PairingRow, PairingStatus};
pub use readiness::NotReady;
pub use runs::{NewRun, RunEnd, RunKind, RunRow, RunStatus};
pub use schema::NEEDS_SCHEMA;
pub use sqlite_writer::SqliteWriteError;

/// This build's version, recorded with the schema it migrates to and
/// with each instance it registers: the version, and the commit when
/// built from a git checkout (see build.rs; docs/operations.md, "Upgrades").
pub const BUILD_VERSION: &str = env!("SWITCHBOARD_BUILD");
pub use sessions::{SessionInfo, SessionPlace, StoredMessage};

use sqlx::migrate::Migrator;
use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous};
use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

/// How long the server lets one of our connections sit in an open
/// transaction it sends nothing to before it ends that connection (and
/// rolls the transaction back). Our transactions send their statements
/// back to back; one left open is a process stopped in the middle of it
/// (paused, swapped out), and its row locks would hold up whoever adopted
/// its work for as long as it stays stopped (docs/operations.md).
const STALLED_TRANSACTION: &str = "SET idle_in_transaction_session_timeout = '5s'";

static SQLITE_MIGRATIONS: Migrator = sqlx::migrate!("../../migrations/sqlite");
static POSTGRES_MIGRATIONS: Migrator = sqlx::migrate!("../../migrations/postgres");

/// Which database the store runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// An SQLite file (the embedded default).
    Sqlite,
    /// A PostgreSQL server.
    Postgres,
}

#[derive(Clone)]
pub(crate) enum Pools {
    /// One writer thread (group commit) beside a read pool (see
    /// [`Store::open`]).
    Sqlite {
        read: SqlitePool,
        /// The turn's hot reads, on the caller's thread (see `sqlite_read`).
        inline: std::sync::Arc<sqlite_read::InlineReader>,
        writer: std::sync::Arc<sqlite_writer::SqliteWriter>,
        /// The database file (other processes' writes are seen through it).
        path: String,
    },
    Postgres(PgPool),
}

/// A handle on the control-plane database; cheap to clone.
#[derive(Clone)]
pub struct Store {
    pools: Pools,
    writes: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// Delivered marks waiting to be written together (see `marks`).
    marks: std::sync::Arc<delivered_marks::Marks>,
    /// Who waits for what (see `signals`).
    wakes: std::sync::Arc<signals::Wakes>,
    /// What changed in this process, for live views (see `changes`).
    changes: tokio::sync::broadcast::Sender<Change>,
    /// This process's registration (see `instances`), once made. A new
    /// id replaces it when the other gateways took this one for dead; the
    /// few bytes of each id are kept for the process's life (`&'static`).
    instance: std::sync::Arc<parking_lot::RwLock<Option<&'static str>>>,
    /// How many times the others took this process for dead (see
    /// `life`).
    lives_lost: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// How far the database's clock is ahead of this host's (see `clock`).
    clock_offset: std::sync::Arc<std::sync::atomic::AtomicI64>,
    /// Since when this process has reached the database (see `reach`).
    reach: std::sync::Arc<reach::Reach>,
    /// The PostgreSQL servers `database_url` names (see `pg_hosts`).
    pg_hosts: Option<std::sync::Arc<pg_hosts::Hosts>>,
}

impl Store {
    /// Open (creating if needed) and migrate the database at `url`:
    /// `sqlite://PATH` or `postgres://...`.
    ///
    /// SQLite allows one writer at a time; several pooled writers would
    /// contend on its file lock and back off in sleeps. So on SQLite all
    /// writes queue for one connection on a thread of its own (group
    /// commit, see `sqlite_writer`) while reads use a pool (WAL lets them
    /// run beside the writer).
    pub async fn open(url: &str) -> Result<Store, StoreError> {
        Self::open_with(normalize_url(url)?, true).await
    }

    /// Open a database that exists already, as it is: nothing is created
    /// and no migration runs (`backup`, `restore`, `doctor`, which must
    /// not change what a running gateway — maybe of another version —
    /// uses; `check_ready` then says what is missing).
    pub async fn open_existing(url: &str) -> Result<Store, StoreError> {
        let (backend, normalized) = parse_url(url)?;
        if backend == Backend::Sqlite && !Path::new(sqlite_path(&normalized)).exists() {
            return Err(StoreError::Connect(
                redact_url(url),
                format!(
                    "there is no database file at {} (fix database_url, or start `switchboard run` once to create it)",
                    sqlite_path(&normalized)
                ),
            ));
        }
        Self::open_with((backend, normalized), false).await
    }

    async fn open_with((backend, url): (Backend, String), migrate: bool) -> Result<Store, StoreError> {
        let failed = |e: sqlx::Error| StoreError::Connect(redact_url(&url), e.to_string());
        let mut pg_hosts = None;
        let pools = match backend {
            Backend::Sqlite => {
                let options = SqliteConnectOptions::from_str(&url)
                    .map_err(failed)?
                    .create_if_missing(migrate)
                    .journal_mode(SqliteJournalMode::Wal)
                    .synchronous(SqliteSynchronous::Normal)
                    .busy_timeout(Duration::from_secs(10))
                    // Temporary tables and indexes of reads stay in memory.
                    .pragma("temp_store", "memory")
                    // At most 1 MiB of pages cached per connection (SQLite's
                    // default is 2 MiB; the OS caches the file as well).
                    .pragma("cache_size", "-1024");
                // Readers beyond the first close after a minute unused: a
                // burst's connections (and their threads) do not stay. The
                // first one runs the migrations, before the writer opens.
                let read = SqlitePoolOptions::new()
                    .max_connections(4)
                    .idle_timeout(Duration::from_secs(60))
                    .connect_with(options)
                    .await
                    .map_err(failed)?;
                if migrate {
                    schema::migrate(&SQLITE_MIGRATIONS, schema::MigratePool::Sqlite(&read)).await?;
                }
                let writer = sqlite_writer::SqliteWriter::start(sqlite_path(&url))
                    .map_err(|e| StoreError::Connect(redact_url(&url), e.to_string()))?;
                Pools::Sqlite {
                    read,
                    inline: std::sync::Arc::new(sqlite_read::InlineReader::new(sqlite_path(&url))),
                    writer: std::sync::Arc::new(writer),
                    path: sqlite_path(&url).to_string(),
                }
            }
            Backend::Postgres => {
                let hosts = std::sync::Arc::new(pg_hosts::Hosts::parse(&url)?);
                if hosts.several() {
                    hosts.find_primary().await?;
                }
                let watch = hosts.clone();
                let pool = PgPoolOptions::new()
                    .max_connections(10)
                    // A query waits this long for a connection, not sqlx's
                    // 30 s: while the database is away a heartbeat fails
                    // soon, and the store looks for it (see `pg_hosts`).
                    .acquire_timeout(Duration::from_secs(5))
                    // Set per connection, not as a startup option, which
                    // poolers such as PgBouncer refuse by default.
                    .after_connect(|conn, _| {
                        Box::pin(async move {
                            sqlx::Executor::execute(conn, STALLED_TRANSACTION).await?;
                            Ok(())
                        })
                    })
                    .before_acquire(move |_, meta| {
                        let stale = watch.opened_before_move(meta.age);
                        Box::pin(async move { Ok(!stale) })
                    })
                    .connect_with(hosts.current())
                    .await
                    .map_err(failed)?;
                pg_hosts = Some(hosts);
                if migrate {
                    schema::migrate(&POSTGRES_MIGRATIONS, schema::MigratePool::Postgres(&pool)).await?;
                }
                Pools::Postgres(pool)
            }
        };
        let store = Store {
            pools,
            writes: Default::default(),
            marks: Default::default(),
            wakes: Default::default(),
            changes: tokio::sync::broadcast::channel(1024).0,
            instance: Default::default(),
            lives_lost: Default::default(),
            clock_offset: Default::default(),
            reach: Default::default(),
            pg_hosts,
        };
        // Nothing is written on this host's own clock: a slow first sample
        // is taken again.
        for _ in 0..5 {
            if store.sync_clock().await? {
                break;
            }
        }
        Ok(store)
    }

    /// Which database this store runs on.
    pub fn backend(&self) -> Backend {
        match self.pools {
            Pools::Sqlite { .. } => Backend::Sqlite,
            Pools::Postgres(_) => Backend::Postgres,
        }
    }

    /// Run one write statement; returns the rows it changed. On SQLite it
    /// joins the group commit and returns once committed.
    pub(crate) async fn exec(&self, stmt: stmt::Stmt) -> Result<u64, StoreError> {
        Ok(self.exec_all(vec![stmt]).await?.first().copied().unwrap_or(0))
    }

    /// Run several write statements atomically (all or none).
    pub(crate) async fn exec_all(&self, mut stmts: Vec<stmt::Stmt>) -> Result<Vec<u64>, StoreError> {
        self.writes.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        match &self.pools {
            Pools::Sqlite { writer, .. } => Ok(writer.write(stmts).await?),
            Pools::Postgres(p) => {
                if stmts.len() == 1
                    && let Some(one) = stmts.pop()
                {
                    let required = one.required;
                    let n = one.pg_query().execute(p).await?.rows_affected();
                    if required && n == 0 {
                        return Err(StoreError::NotChanged);
                    }
                    return Ok(vec![n]);
                }
                let mut tx = p.begin().await?;
                let mut changed = Vec::with_capacity(stmts.len());
                for s in stmts {
                    let required = s.required;
                    let n = s.pg_query().execute(&mut *tx).await?.rows_affected();
                    if required && n == 0 {
                        // Dropping the transaction rolls it back.
                        return Err(StoreError::NotChanged);
                    }
                    changed.push(n);
                }
                tx.commit().await?;
                Ok(changed)
            }
        }
    }

    /// The rows of a hot read run on this thread (SQLite; see
    /// `sqlite_read`); `None` on PostgreSQL or when the read would wait:
    /// then the caller reads through the pool.
    pub(crate) fn read_inline<T: sqlite_read::InlineRow>(
        &self,
        sql: &str,
        args: &[stmt::Arg],
    ) -> Option<Result<Vec<T>, StoreError>> {
        match &self.pools {
            Pools::Sqlite { inline, .. } => inline.rows(sql, args).map(|r| r.map_err(StoreError::Read)),
            Pools::Postgres(_) => None,
        }
    }

    /// Write statements executed through this handle (and its clones).
    pub fn writes(&self) -> u64 {
        self.writes.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Close every connection (flushes SQLite's WAL).
    pub async fn close(&self) {
        self.flush_marks().await;
        match &self.pools {
            Pools::Sqlite {
                read, writer, inline, ..
            } => {
                writer.flush().await;
                inline.close();
                read.close().await;
            }
            Pools::Postgres(p) => p.close().await,
        }
    }
}

/// This host's time in Unix milliseconds. Times other gateways compare
/// are taken from [`Store::now_ms`] (the database's clock).
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// `url` normalized, its SQLite file (and folder) created when missing.
fn normalize_url(url: &str) -> Result<(Backend, String), StoreError> {
    let (backend, normalized) = parse_url(url)?;
    if backend == Backend::Sqlite {
        let path = sqlite_path(&normalized);
        create_private(Path::new(path))
            .map_err(|e| StoreError::Connect(path.to_string(), format!("cannot create the database: {e}")))?;
    }
    Ok((backend, normalized))
}

/// `url` normalized (`sqlite://PATH?QUERY` with `mode=rwc` by default).
fn parse_url(url: &str) -> Result<(Backend, String), StoreError> {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        return Ok((Backend::Postgres, url.to_string()));
    }
    let Some(rest) = url.strip_prefix("sqlite:") else {
        return Err(StoreError::BadUrl(redact_url(url)));
    };
    let path_part = rest.trim_start_matches("//");
    let (path, query) = path_part.split_once('?').unwrap_or((path_part, ""));
    if path == ":memory:" || path.is_empty() {
        return Err(StoreError::Connect(
            url.to_string(),
            "an in-memory SQLite database cannot be shared by the writer and the readers; give a file path (sqlite://data/control_plane.db)".into(),
        ));
    }
    let query = if query.is_empty() {
        "mode=rwc".to_string()
    } else {
        query.to_string()
    };
    Ok((Backend::Sqlite, format!("sqlite://{path}?{query}")))
}

/// The database file of an SQLite `database_url`; `None` for PostgreSQL.
pub fn sqlite_file(url: &str) -> Result<Option<std::path::PathBuf>, StoreError> {
    let (backend, url) = parse_url(url)?;
    Ok((backend == Backend::Sqlite).then(|| std::path::PathBuf::from(sqlite_path(&url))))
}

/// The file of a normalized `sqlite://PATH?QUERY` URL.
fn sqlite_path(url: &str) -> &str {
    let rest = url.trim_start_matches("sqlite://");
    rest.split_once('?').map_or(rest, |(path, _)| path)
}

/// Create the database file readable by its owner only (0600), and its
/// folder, when missing, likewise (0700). SQLite gives the WAL and shared
/// memory files the database file's permissions.
fn create_private(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    if let Some(parent) = path.parent()
        && !parent.as_os_str().is_empty()
        && !parent.exists()
    {
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(parent)?;
    }
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// A database URL safe for logs and errors: any password replaced, and the
/// query (which may carry `password=`) left out.
pub fn redact_url(url: &str) -> String {
    let url = url.split_once('?').map_or(url, |(base, _)| base);
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
        assert_eq!(redact_url("postgres://u@h/db?password=secret"), "postgres://u@h/db");
    }
}
