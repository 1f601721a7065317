//! The outbox: run announcements and chat replies are written here before
//! delivery, so a channel outage or a restart delays them but never loses
//! them. One row per delivery key (`run_id`: a run id, or `reply:<inbox
//! key>` for the answer to a message), so each is delivered once.

use crate::stmt::Stmt;
use crate::{Store, StoreError};
use sqlx::{AssertSqlSafe, FromRow};

/// The columns of an `OutboxRow`, in its order.
pub(crate) const COLUMNS: &str = "id, run_id, channel, chat, thread, reply_to, body, attempts";

/// A delivery waiting in the outbox.
#[derive(Debug, Clone, FromRow)]
pub struct OutboxRow {
    /// Row id.
    pub id: i64,
    /// The delivery key: a run id, or `reply:<inbox key>`.
    pub run_id: String,
    /// The channel instance to deliver to.
    pub channel: String,
    /// The chat.
    pub chat: String,
    /// The thread, if any.
    pub thread: Option<String>,
    /// The message this one answers (replies only).
    pub reply_to: Option<String>,
    /// The text.
    pub body: String,
    /// Tries so far.
    pub attempts: i64,
}

impl Store {
    /// Queue an announcement for `run_id`. Returns false when that run was
    /// already queued (idempotent).
    pub async fn enqueue_announcement(
        &self,
        run_id: &str,
        channel: &str,
        chat: &str,
        thread: Option<&str>,
        body: &str,
    ) -> Result<bool, StoreError> {
        let now = self.now_ms();
        // Queued and marked announced together: a crash leaves either both
        // or neither (see `unannounced_runs`).
        let changed = self
            .exec_all(vec![
                Stmt::new(
                    "INSERT INTO outbox (run_id, channel, chat, thread, body, status, attempts, next_attempt_at, created_at)
                     VALUES ($1, $2, $3, $4, $5, 'pending', 0, $6, $7) ON CONFLICT (run_id) DO NOTHING",
                )
                .bind(run_id)
                .bind(channel)
                .bind(chat)
                .bind(thread)
                .bind(body)
                .bind(now)
                .bind(now),
                Stmt::new("UPDATE runs SET announce = 'done' WHERE id = $1 AND announce = 'pending'").bind(run_id),
            ])
            .await?;
        self.wake_outbox();
        Ok(changed.first() == Some(&1))
    }

    /// Rows waiting to be delivered.
    pub async fn outbox_counts(&self) -> Result<i64, StoreError> {
        Ok(read!(self, |p| sqlx::query_scalar(
            "SELECT COUNT(*) FROM outbox WHERE status = 'pending'"
        )
        .fetch_one(p)
        .await)?)
    }

    /// Pending announcements whose next attempt is due, oldest first.
    pub async fn due_announcements(&self, limit: i64) -> Result<Vec<OutboxRow>, StoreError> {
        Ok(read!(self, |p| sqlx::query_as::<_, OutboxRow>(AssertSqlSafe(
            format!(
                "SELECT {COLUMNS} FROM outbox WHERE status = 'pending' AND next_attempt_at <= $1 ORDER BY id LIMIT $2"
            )
        ))
        .bind(self.now_ms())
        .bind(limit)
        .fetch_all(p)
        .await)?)
    }

    /// Row `id` was delivered.
    pub async fn mark_announced(&self, id: i64) -> Result<(), StoreError> {
        self.exec(
            Stmt::new(
                "UPDATE outbox SET status = 'delivered', delivered_at = $1, attempts = attempts + 1 WHERE id = $2",
            )
            .bind(self.now_ms())
            .bind(id),
        )
        .await?;
        Ok(())
    }

    /// Record a failed attempt; the next one is due after `retry_in_ms`.
    pub async fn retry_announcement(&self, id: i64, retry_in_ms: i64, error: &str) -> Result<(), StoreError> {
        self.exec(
            Stmt::new("UPDATE outbox SET attempts = attempts + 1, next_attempt_at = $1, last_error = $2 WHERE id = $3")
                .bind(self.now_ms() + retry_in_ms)
                .bind(error)
                .bind(id),
        )
        .await?;
        Ok(())
    }

    /// Stop trying a row the channel keeps refusing for good (status
    /// `failed`, kept for the record with its last error).
    pub async fn give_up_announcement(&self, id: i64, error: &str) -> Result<(), StoreError> {
        self.exec(
            Stmt::new("UPDATE outbox SET status = 'failed', attempts = attempts + 1, last_error = $1 WHERE id = $2")
                .bind(error)
                .bind(id),
        )
        .await?;
        Ok(())
    }

    /// Announcements of a run (delivered or not), for tests and `/subagents info`.
    pub async fn announcements_of(&self, run_id: &str) -> Result<Vec<(String, i64)>, StoreError> {
        Ok(read!(self, |p| sqlx::query_as::<_, (String, i64)>(
            "SELECT status, attempts FROM outbox WHERE run_id = $1"
        )
        .bind(run_id)
        .fetch_all(p)
        .await)?)
    }
}
