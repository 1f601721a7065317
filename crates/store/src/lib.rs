//! The control plane: everything that must survive a restart.
//!
//! One [`Store`] over sqlx's `Any` driver serves both SQLite (the embedded
//! default) and PostgreSQL (several gateways sharing one control plane).
//! All SQL of the project lives in this crate; queries use `$N` placeholders,
//! which both backends accept, and migrations are kept as twins under
//! `migrations/sqlite` and `migrations/postgres`.

mod approvals;
mod cost;
mod cursors;
mod error;
mod memory;
mod runs;
mod sessions;

pub use approvals::{ApprovalRow, NewApproval};
pub use cost::{CostTotals, utc_day};
pub use error::StoreError;
pub use memory::MemoryRow;
pub use runs::{NewRun, RunEnd, RunRow, RunStatus};
pub use sessions::{SessionInfo, StoredMessage};

use sqlx::any::{AnyPoolOptions, install_default_drivers};
use sqlx::migrate::Migrator;
use sqlx::{AnyPool, Executor};
use std::path::Path;

static SQLITE_MIGRATIONS: Migrator = sqlx::migrate!("../../migrations/sqlite");
static POSTGRES_MIGRATIONS: Migrator = sqlx::migrate!("../../migrations/postgres");

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A handle on the control-plane database; cheap to clone.
#[derive(Clone)]
pub struct Store {
    read: AnyPool,
    write: AnyPool,
    backend: Backend,
    writes: std::sync::Arc<std::sync::atomic::AtomicU64>,
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
        install_default_drivers();
        let (backend, url) = normalize_url(url)?;
        let connect = |max: u32| {
            let mut options = AnyPoolOptions::new().max_connections(max);
            if backend == Backend::Sqlite {
                options = options.after_connect(|conn, _| {
                    Box::pin(async move {
                        conn.execute(
                            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 10000;",
                        )
                        .await?;
                        Ok(())
                    })
                });
            }
            let url = url.clone();
            async move {
                options
                    .connect(&url)
                    .await
                    .map_err(|e| StoreError::Connect(redact_url(&url), e.to_string()))
            }
        };
        let (read, write) = match backend {
            Backend::Sqlite => {
                let write = connect(1).await?;
                (connect(4).await?, write)
            }
            Backend::Postgres => {
                let pool = connect(10).await?;
                (pool.clone(), pool)
            }
        };
        let migrator = match backend {
            Backend::Sqlite => &SQLITE_MIGRATIONS,
            Backend::Postgres => &POSTGRES_MIGRATIONS,
        };
        migrator.run(&write).await?;
        Ok(Store {
            read,
            write,
            backend,
            writes: Default::default(),
        })
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    pub(crate) fn pool(&self) -> &AnyPool {
        &self.read
    }

    /// The pool for a statement that writes; counted for benchmarks.
    pub(crate) fn writer(&self) -> &AnyPool {
        self.writes.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        &self.write
    }

    /// Write statements executed through this handle (and its clones).
    pub fn writes(&self) -> u64 {
        self.writes.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Close every connection (flushes SQLite's WAL).
    pub async fn close(&self) {
        self.write.close().await;
        self.read.close().await;
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
