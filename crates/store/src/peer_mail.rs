//! What one gateway asks of the others through the control plane (beside
//! approvals and cancellations, which live in their own rows): flags every
//! instance follows, and messages for a running child on another instance.

use crate::stmt::Stmt;
use crate::{Store, StoreError};

impl<'s> Mail<'s> {
    /// Set cluster-wide flag `name` (e.g. `paused`).
    pub async fn set_flag(self, name: &str, value: &str) -> Result<(), StoreError> {
        self.0
            .exec(
                Stmt::new(
                    "INSERT INTO cluster_flags (name, value, updated_at) VALUES ($1, $2, $3)
                 ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                )
                .bind(name)
                .bind(value)
                .bind(self.0.now_ms()),
            )
            .await?;
        Ok(())
    }

    /// Every cluster-wide flag whose name starts with `prefix`: (name, value).
    pub async fn flags_starting_with(self, prefix: &str) -> Result<Vec<(String, String)>, StoreError> {
        Ok(read!(self.0, |p| sqlx::query_as(
            "SELECT name, value FROM cluster_flags WHERE substr(name, 1, length($1)) = $1"
        )
        .bind(prefix)
        .fetch_all(p)
        .await)?)
    }

    /// Leave `body` for the running child of session `session_key`, which
    /// instance `instance` runs.
    pub async fn send_to_child(self, instance: &str, session_key: &str, body: &str) -> Result<(), StoreError> {
        self.0
            .exec(
                Stmt::new(
                    "INSERT INTO child_mail (instance_id, session_key, body, created_at) VALUES ($1, $2, $3, $4)",
                )
                .bind(instance)
                .bind(session_key)
                .bind(body)
                .bind(self.0.now_ms()),
            )
            .await?;
        Ok(())
    }

    /// Take the messages left for children this instance runs, oldest
    /// first: (session key, body).
    pub async fn take_child_mail(self) -> Result<Vec<(String, String)>, StoreError> {
        let Some(me) = self.0.instance_id() else {
            return Ok(Vec::new());
        };
        let rows: Vec<(i64, String, String)> = read!(self.0, |p| sqlx::query_as(
            "SELECT id, session_key, body FROM child_mail WHERE instance_id = $1 ORDER BY id"
        )
        .bind(me)
        .fetch_all(p)
        .await)?;
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        let taken: Vec<Stmt> = rows
            .iter()
            .map(|(id, _, _)| Stmt::new("DELETE FROM child_mail WHERE id = $1").bind(*id))
            .collect();
        self.0.exec_all(taken).await?;
        Ok(rows.into_iter().map(|(_, k, b)| (k, b)).collect())
    }
}

/// Flags and mail between instances.
#[derive(Clone, Copy)]
pub struct Mail<'s>(&'s Store);

impl Store {
    /// Flags and mail between instances.
    pub fn mail(&self) -> Mail<'_> {
        Mail(self)
    }
}
