//! What an orchestrator's readiness probe and a metrics scrape ask of the
//! store: is the database reachable with every migration this build
//! knows applied, and how many child runs are in each state.

use crate::{Backend, Store, StoreError};

/// Why the store is not ready, in words for an operator.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NotReady {
    /// The database did not answer (the details are logged, not shown: they
    /// may name hosts or files).
    #[error("the database does not answer (see the gateway's log)")]
    Silent,
    /// A migration of this build is not applied.
    #[error("migration {version} ({description}) is not applied; start `switchboard run` once to apply it")]
    Unmigrated {
        /// Its version.
        version: i64,
        /// What it does.
        description: String,
    },
}

impl Store {
    /// `Ok` when the database answers and every migration of this build
    /// is applied (a newer instance may have applied more); otherwise
    /// what is wrong, in words for an operator.
    pub async fn check_ready(&self) -> Result<(), NotReady> {
        let applied: Vec<(i64, bool)> = read!(self, |p| sqlx::query_as(
            "SELECT version, success FROM _sqlx_migrations"
        )
        .fetch_all(p)
        .await)
        .map_err(|e| {
            // The details may name hosts or files: logged, not answered.
            tracing::warn!(error = %e, "readiness: the database did not answer");
            NotReady::Silent
        })?;
        let embedded = self.migrator();
        for m in embedded.iter() {
            if !applied.iter().any(|(v, ok)| *v == m.version && *ok) {
                return Err(NotReady::Unmigrated {
                    version: m.version,
                    description: m.description.to_string(),
                });
            }
        }
        Ok(())
    }

    /// The newest schema this build knows (for this backend).
    pub fn schema(&self) -> i64 {
        crate::schema::known(self.migrator())
    }

    /// The newest migration applied to the database (0 for a new one).
    pub async fn database_schema(&self) -> Result<i64, StoreError> {
        Ok(read!(self, |p| sqlx::query_scalar::<_, i64>(
            "SELECT COALESCE(MAX(version), 0) FROM _sqlx_migrations WHERE success"
        )
        .fetch_one(p)
        .await)?)
    }

    /// This build's migrations for the backend open.
    fn migrator(&self) -> &'static sqlx::migrate::Migrator {
        match self.backend() {
            Backend::Sqlite => &crate::SQLITE_MIGRATIONS,
            Backend::Postgres => &crate::POSTGRES_MIGRATIONS,
        }
    }

    /// Child runs by (kind, status, count), for metrics.
    pub async fn run_tally(&self) -> Result<Vec<(String, String, i64)>, StoreError> {
        Ok(read!(self, |p| sqlx::query_as(
            "SELECT kind, status, COUNT(*) FROM runs GROUP BY kind, status ORDER BY kind, status"
        )
        .fetch_all(p)
        .await)?)
    }
}
