//! Store errors.

/// What went wrong in the control plane.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// `database_url` is neither SQLite nor PostgreSQL.
    #[error("unsupported database_url '{0}'; use sqlite://PATH or postgres://...")]
    BadUrl(String),
    /// The database could not be opened (the URL, without password, and why).
    #[error("cannot open the database {0}: {1}")]
    Connect(String, String),
    /// A migration failed.
    #[error("database migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// A query failed.
    #[error("database error: {0}")]
    Sql(#[from] sqlx::Error),
    /// A read on the caller's thread failed (SQLite).
    #[error("database read failed: {0}")]
    Read(#[source] rusqlite::Error),
    /// The SQLite writer did not write (or could not start).
    #[error("database write failed: {0}")]
    SqliteWrite(#[source] crate::SqliteWriteError),
    /// A write whose condition no longer holds: another instance took
    /// the work (a lease or a row moved), which waiting does not change.
    /// The write changed nothing.
    #[error("{}", crate::stmt::NOT_CHANGED)]
    NotChanged,
    /// A backup or restore could not write its file.
    #[error("database write failed: {0}")]
    Write(String),
    /// The database was migrated by a build this one cannot work beside.
    #[error(
        "the database's schema is {theirs}, migrated by switchboard {written_by}, and needs a build that knows schema {needs}; this is switchboard {} (schema {ours}): run switchboard {written_by} or newer",
        crate::BUILD_VERSION
    )]
    SchemaTooNew {
        /// The database's schema.
        theirs: i64,
        /// The oldest schema a build must know to work with it.
        needs: i64,
        /// The build that migrated it.
        written_by: String,
        /// This build's schema.
        ours: i64,
    },
    /// The database was migrated by a newer build that recorded nothing
    /// about which builds may work beside it.
    #[error(
        "the database's schema is {theirs}, newer than this switchboard {} knows (schema {ours}), and it records no compatibility: run a switchboard that knows schema {theirs}",
        crate::BUILD_VERSION
    )]
    SchemaUnrecorded {
        /// The database's schema.
        theirs: i64,
        /// This build's schema.
        ours: i64,
    },
    /// A stored value could not be read back.
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
}

impl StoreError {
    /// Whether the database could not be used (it is away, full,
    /// read-only, or failed a read or write), as opposed to a write whose
    /// condition no longer holds (another instance took the work: a lease
    /// or a row moved), which waiting does not change.
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            Self::Connect(..) | Self::Sql(_) | Self::Read(_) | Self::SqliteWrite(_) | Self::Write(_)
        )
    }

    /// Why the database does not take writes, when it says: its volume is
    /// full, or it (or its folder) is read-only. By the database's own
    /// codes: SQLite's `SQLITE_FULL` and `SQLITE_READONLY` (from the
    /// writer, the inline reader or sqlx's pool), PostgreSQL's `disk_full`
    /// (53100).
    pub fn unwritable(&self) -> Option<Unwritable> {
        let sqlite = match self {
            Self::SqliteWrite(e) => e.code(),
            Self::Read(e) => e.sqlite_error_code(),
            // sqlx's SQLite pool gives SQLite's (extended) result code.
            Self::Sql(sqlx::Error::Database(e)) if e.try_downcast_ref::<sqlx::sqlite::SqliteError>().is_some() => e
                .code()
                .and_then(|c| c.parse::<std::ffi::c_int>().ok())
                .map(|c| rusqlite::ffi::Error::new(c).code),
            Self::Sql(sqlx::Error::Database(e)) => {
                return (e.code().as_deref() == Some("53100")).then_some(Unwritable::Full);
            }
            _ => None,
        };
        match sqlite? {
            rusqlite::ErrorCode::DiskFull => Some(Unwritable::Full),
            rusqlite::ErrorCode::ReadOnly => Some(Unwritable::ReadOnly),
            _ => None,
        }
    }
}

impl From<crate::SqliteWriteError> for StoreError {
    fn from(e: crate::SqliteWriteError) -> Self {
        match e {
            crate::SqliteWriteError::NotChanged => Self::NotChanged,
            e => Self::SqliteWrite(e),
        }
    }
}

/// Why a database does not take writes (see [`StoreError::unwritable`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unwritable {
    /// Its volume is full.
    Full,
    /// The database file or its folder is read-only.
    ReadOnly,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What SQLite says with result code `code`.
    fn sqlite(code: std::ffi::c_int) -> rusqlite::Error {
        rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(code), None)
    }

    fn write_failed(code: std::ffi::c_int) -> StoreError {
        StoreError::SqliteWrite(crate::SqliteWriteError::Sqlite {
            context: "commit failed",
            source: std::sync::Arc::new(sqlite(code)),
        })
    }

    #[test]
    fn a_moved_lease_is_not_the_database_being_away() {
        assert!(write_failed(rusqlite::ffi::SQLITE_FULL).is_unavailable());
        assert!(StoreError::Read(sqlite(rusqlite::ffi::SQLITE_IOERR)).is_unavailable());
        assert!(!StoreError::from(crate::SqliteWriteError::NotChanged).is_unavailable());
        assert!(!StoreError::Corrupt("bad row".into()).is_unavailable());
    }

    #[test]
    fn a_full_or_read_only_database_is_told_by_its_code() {
        let full = write_failed(rusqlite::ffi::SQLITE_FULL);
        assert_eq!(full.unwritable(), Some(Unwritable::Full));
        assert!(full.to_string().contains("full"), "{full}");
        let rolled_back = StoreError::SqliteWrite(crate::SqliteWriteError::RolledBack(Box::new(
            crate::SqliteWriteError::Sqlite {
                context: "write refused",
                source: std::sync::Arc::new(sqlite(rusqlite::ffi::SQLITE_FULL)),
            },
        )));
        assert_eq!(rolled_back.unwritable(), Some(Unwritable::Full));
        assert_eq!(
            write_failed(rusqlite::ffi::SQLITE_READONLY).unwritable(),
            Some(Unwritable::ReadOnly)
        );
        assert_eq!(write_failed(rusqlite::ffi::SQLITE_IOERR).unwritable(), None);
        assert_eq!(StoreError::NotChanged.unwritable(), None);
    }

    /// sqlx's SQLite pool reports SQLite's own code too: a write on a
    /// connection opened read-only.
    #[tokio::test]
    async fn a_read_only_database_through_sqlx_is_told_by_its_code() {
        use sqlx::Connection;
        let dir = tempfile::tempdir().unwrap();
        let url = |mode: &str| format!("sqlite://{}?mode={mode}", dir.path().join("t.db").display());
        let mut rw = sqlx::SqliteConnection::connect(&url("rwc")).await.unwrap();
        sqlx::query("CREATE TABLE t (k TEXT)").execute(&mut rw).await.unwrap();
        let mut ro = sqlx::SqliteConnection::connect(&url("ro")).await.unwrap();
        let refused = sqlx::query("INSERT INTO t VALUES ('a')")
            .execute(&mut ro)
            .await
            .unwrap_err();
        let e = StoreError::from(refused);
        assert_eq!(e.unwritable(), Some(Unwritable::ReadOnly), "{e}");
    }
}
