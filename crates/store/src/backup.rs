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
use std::str::FromStr;

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
        if dest.exists() {
            return Err(StoreError::Write(format!(
                "{} exists already; name a new file",
                dest.display()
            )));
        }
        let target = dest
            .to_str()
            .ok_or_else(|| StoreError::Write(format!("{} is not a UTF-8 path", dest.display())))?
            .to_string();
        // Marks waiting to be written go into the copy too.
        self.flush_marks().await;
        sqlx::query("VACUUM INTO $1").bind(&target).execute(read).await?;
        restrict(dest)?;
        verify(dest).await
    }
}

/// The copy at `path` opened read-only on its own: intact, with its tables.
pub async fn verify(path: &Path) -> Result<BackupSummary, StoreError> {
    let options = SqliteConnectOptions::from_str(&format!("sqlite://{}", path.display()))?
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

fn restrict(path: &Path) -> Result<(), StoreError> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| StoreError::Write(format!("cannot make {} private: {e}", path.display())))
}
