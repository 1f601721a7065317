//! The database's schema against this build's (docs/operations.md,
//! "Upgrades"). Migrations are expand-then-contract: a migration adds
//! (tables, columns with defaults an older build ignores); only a later
//! release takes away what an older build still uses, and raises
//! `NEEDS_SCHEMA` when it does. Each build that migrates records, for its
//! schema, the oldest schema a build must know to work with the database
//! and its own version. A build that meets a schema newer than it knows
//! runs when it knows at least that oldest schema, and otherwise refuses to
//! start, naming the version to run.

use crate::StoreError;
use sqlx::migrate::Migrator;
use sqlx::{PgPool, SqlitePool};

/// The oldest schema a build must know to work with a database this build
/// has migrated. Raised only by a migration that renames or drops what an
/// older build uses (13 is the first schema that records it).
pub const NEEDS_SCHEMA: i64 = 13;

/// The pool migrations run on.
pub(crate) enum MigratePool<'a> {
    Sqlite(&'a SqlitePool),
    Postgres(&'a PgPool),
}

macro_rules! on {
    ($pool:expr, |$p:ident| $body:expr) => {
        match $pool {
            MigratePool::Sqlite($p) => $body,
            MigratePool::Postgres($p) => $body,
        }
    };
}

/// The newest schema `migrator` knows.
pub(crate) fn known(migrator: &Migrator) -> i64 {
    migrator.iter().map(|m| m.version).max().unwrap_or(0)
}

/// Migrate to this build's schema, or, when the database's is newer,
/// check that this build may work with it (refusing to start when not).
pub(crate) async fn migrate(migrator: &Migrator, pool: MigratePool<'_>) -> Result<(), StoreError> {
    let ours = known(migrator);
    // No table yet: a new database.
    let theirs: Option<i64> = on!(&pool, |p| sqlx::query_scalar(
        "SELECT MAX(version) FROM _sqlx_migrations"
    )
    .fetch_one(*p)
    .await
    .ok()
    .flatten());
    match theirs {
        Some(theirs) if theirs > ours => newer(&pool, theirs, ours).await,
        _ => {
            on!(&pool, |p| migrator.run(*p).await)?;
            on!(&pool, |p| sqlx::query(
                "INSERT INTO schema_compat (schema_version, needs_schema, written_by) VALUES ($1, $2, $3)
                 ON CONFLICT (schema_version) DO NOTHING"
            )
            .bind(ours)
            .bind(NEEDS_SCHEMA)
            .bind(crate::BUILD_VERSION)
            .execute(*p)
            .await
            .map(drop))?;
            Ok(())
        }
    }
}

/// The database's schema `theirs` is newer than this build's `ours`.
async fn newer(pool: &MigratePool<'_>, theirs: i64, ours: i64) -> Result<(), StoreError> {
    let recorded: Option<(i64, String)> = on!(pool, |p| sqlx::query_as(
        "SELECT needs_schema, written_by FROM schema_compat WHERE schema_version = $1"
    )
    .bind(theirs)
    .fetch_optional(*p)
    .await
    .ok()
    .flatten());
    match recorded {
        Some((needs, _)) if ours >= needs => {
            tracing::info!(
                database_schema = theirs,
                this_build_schema = ours,
                "the database was migrated by a newer build, which this one can work beside (a rolling upgrade)"
            );
            Ok(())
        }
        Some((needs, written_by)) => Err(StoreError::SchemaTooNew {
            theirs,
            needs,
            written_by,
            ours,
        }),
        None => Err(StoreError::SchemaUnrecorded { theirs, ours }),
    }
}
