//! Store errors.

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("unsupported database_url '{0}'; use sqlite://PATH or postgres://...")]
    BadUrl(String),
    #[error("cannot open the database {0}: {1}")]
    Connect(String, String),
    #[error("database migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("database error: {0}")]
    Sql(#[from] sqlx::Error),
    #[error("database write failed: {0}")]
    Write(String),
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
}
