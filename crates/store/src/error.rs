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
    Read(String),
    /// The SQLite writer could not commit.
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
        match self {
            Self::Connect(..) | Self::Sql(_) | Self::Read(_) => true,
            Self::Write(why) => !why.contains(crate::stmt::NOT_CHANGED),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_moved_lease_is_not_the_database_being_away() {
        assert!(StoreError::Write("commit failed: database or disk is full".into()).is_unavailable());
        assert!(StoreError::Read("disk I/O error".into()).is_unavailable());
        assert!(!StoreError::Write(crate::stmt::NOT_CHANGED.into()).is_unavailable());
        assert!(!StoreError::Corrupt("bad row".into()).is_unavailable());
    }
}
