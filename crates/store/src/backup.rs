//! Backups of the embedded database (docs/operations.md): SQLite writes a
//! consistent copy of the live database (`VACUUM INTO`, which reads one
//! snapshot while the gateway goes on writing); the copy is then opened
//! on its own and checked before it is called a backup. Restoring puts a
//! checked copy in place of a stopped gateway's database, keeping the old
//! file beside it. PostgreSQL has `pg_dump` for this.

use crate::{Store, StoreError};
use sqlx::Connection;
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};
use std::path::Path;

/// What a checked copy holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackupSummary {
    /// Bytes in the file.
    pub bytes: u64,
    /// Rows of the inbox (messages taken).
    pub inbox: i64,
    /// Messages in conversations' transcripts.
    pub messages: i64,
    /// Child runs recorded.
    pub runs: i64,
}

impl Store {
    /// Write a checked copy of the database to `dest` (which must not
    /// exist); created readable by its owner only.
    pub async fn backup_to(&self, dest: &Path) -> Result<BackupSummary, StoreError> {
        let crate::Pools::Sqlite { read, .. } = &self.pools else {
            return Err(StoreError::Write(
                "backups of a PostgreSQL control plane are made with pg_dump (docs/operations.md)".into(),
            ));
        };
        // Made here, empty, private and new (never through a link), so the
        // copy is nobody else's to read while it is written.
        create_private_new(dest)?;
        let made = self.vacuum_into(read, dest).await;
        if made.is_err() {
            let _ = std::fs::remove_file(dest);
        }
        made
    }

    async fn vacuum_into(&self, read: &sqlx::SqlitePool, dest: &Path) -> Result<BackupSummary, StoreError> {
        let target = dest
            .to_str()
            .ok_or_else(|| StoreError::Write(format!("{} is not a UTF-8 path", dest.display())))?
            .to_string();
        // Marks waiting to be written go into the copy too.
        self.flush_marks().await;
        sqlx::query("VACUUM INTO $1").bind(&target).execute(read).await?;
        verify(dest).await
    }
}

/// The copy at `path` opened read-only on its own: intact, with its tables.
pub async fn verify(path: &Path) -> Result<BackupSummary, StoreError> {
    let options = SqliteConnectOptions::new()
        .filename(path)
        .read_only(true)
        .create_if_missing(false);
    let mut conn = SqliteConnection::connect_with(&options).await?;
    let check: String = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_one(&mut conn)
        .await?;
    if check != "ok" {
        return Err(StoreError::Corrupt(format!(
            "{} failed SQLite's integrity check: {check}",
            path.display()
        )));
    }
    let mut count = async |query: &'static str| -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar(query).fetch_one(&mut conn).await?)
    };
    let summary = BackupSummary {
        bytes: std::fs::metadata(path).map(|m| m.len()).unwrap_or(0),
        inbox: count("SELECT COUNT(*) FROM inbox").await?,
        messages: count("SELECT COUNT(*) FROM messages").await?,
        runs: count("SELECT COUNT(*) FROM runs").await?,
    };
    conn.close().await?;
    Ok(summary)
}

/// Create `path` empty with mode 0600; refused when anything (a file, a
/// link) is there already.
fn create_private_new(path: &Path) -> Result<(), StoreError> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map(drop)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => {
                StoreError::Write(format!("{} exists already; name a new file", path.display()))
            }
            _ => StoreError::Write(format!("cannot create {}: {e}", path.display())),
        })
}

impl Store {
    /// Fold the WAL into the database file and empty it (SQLite; nothing
    /// to do on PostgreSQL), so the file alone holds every commit.
    pub async fn checkpoint(&self) -> Result<(), StoreError> {
        if let crate::Pools::Sqlite { read, .. } = &self.pools {
            let (busy, _, _): (i64, i64, i64) = sqlx::query_as("PRAGMA wal_checkpoint(TRUNCATE)")
                .fetch_one(read)
                .await?;
            if busy != 0 {
                return Err(StoreError::Write("another connection kept the WAL busy".into()));
            }
        }
        Ok(())
    }
}
