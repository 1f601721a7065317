//! The outbox: run announcements and chat replies are written here before
//! delivery, so a channel outage or a restart delays them but never loses
//! them. One row per delivery key (`delivery_key`: a run id, or
//! `reply:<inbox key>` for the answer to a message), so each is delivered once.

use crate::stmt::Stmt;
use crate::{Store, StoreError};
use sqlx::{AssertSqlSafe, FromRow};

/// The columns of an `OutboxRow`, in its order.
pub(crate) const COLUMNS: &str = "id, delivery_key, channel, chat, thread, reply_to, body, attempts";

/// Where a delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutboxStatus {
    /// Not delivered yet (retried until it is, or given up).
    Pending,
    /// The channel took it.
    Delivered,
    /// Given up after a permanent failure or too many tries.
    Failed,
    /// A reply the platform refused for good (kept for the record).
    Refused,
}

stored_words!(OutboxStatus, "outbox status", {
    Pending => "pending",
    Delivered => "delivered",
    Failed => "failed",
    Refused => "refused",
});

/// A delivery waiting in the outbox.
#[derive(Debug, Clone, FromRow)]
pub struct OutboxRow {
    /// Row id.
    pub id: i64,
    /// The delivery key: a run id, or `reply:<inbox key>`.
    pub delivery_key: String,
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

impl<'s> Outbox<'s> {
    /// Queue `body` for delivery into `channel`/`chat`/`thread` under
    /// `delivery_key`: a run's id for its announcement (the run is then
    /// marked announced in the same transaction), `reply:<id>` for a reply
    /// a channel did not take. Returns false when that key was already
    /// queued (idempotent).
    pub async fn enqueue(
        self,
        delivery_key: &str,
        channel: &str,
        chat: &str,
        thread: Option<&str>,
        body: &str,
    ) -> Result<bool, StoreError> {
        let now = self.0.now_ms();
        // Queued and marked announced together: a crash leaves either both
        // or neither (see `unannounced_runs`).
        let changed = self.0
            .exec_all(vec![
                Stmt::new(
                    "INSERT INTO outbox (delivery_key, channel, chat, thread, body, status, attempts, next_attempt_at, created_at)
                     VALUES ($1, $2, $3, $4, $5, 'pending', 0, $6, $7) ON CONFLICT (delivery_key) DO NOTHING",
                )
                .bind(delivery_key)
                .bind(channel)
                .bind(chat)
                .bind(thread)
                .bind(body)
                .bind(now)
                .bind(now),
                Stmt::new("UPDATE runs SET announce = 'done' WHERE id = $1 AND announce = 'pending'").bind(delivery_key),
            ])
            .await?;
        self.0.wake_outbox();
        self.0.wake_other_outboxes().await;
        Ok(changed.first() == Some(&1))
    }

    /// Rows waiting to be delivered.
    pub async fn pending(self) -> Result<i64, StoreError> {
        Ok(read!(self.0, |p| sqlx::query_scalar(
            "SELECT COUNT(*) FROM outbox WHERE status = 'pending'"
        )
        .fetch_one(p)
        .await)?)
    }

    /// Pending announcements whose next attempt is due, oldest first.
    pub async fn due(self, limit: i64) -> Result<Vec<OutboxRow>, StoreError> {
        Ok(read!(self.0, |p| {
            sqlx::query_as::<_, OutboxRow>(AssertSqlSafe(
            format!(
                "SELECT {COLUMNS} FROM outbox WHERE status = 'pending' AND next_attempt_at <= $1 ORDER BY id LIMIT {limit}",
            )
        ))
        .bind(self.0.now_ms())
        .fetch_all(p)
        .await
        })?)
    }

    /// Like [`Outbox::due`], for the channels named (those a worker
    /// delivers for).
    pub async fn due_in(self, channels: &[String], limit: i64) -> Result<Vec<OutboxRow>, StoreError> {
        if channels.is_empty() {
            return Ok(Vec::new());
        }
        let n = channels.len();
        let sql = format!(
            "SELECT {COLUMNS} FROM outbox WHERE status = 'pending' AND channel IN ({}) AND next_attempt_at <= ${} ORDER BY id LIMIT {limit}",
            placeholders(1, n),
            n + 1,
        );
        Ok(read!(self.0, |p| {
            let mut q = sqlx::query_as::<_, OutboxRow>(AssertSqlSafe(sql.clone()));
            for c in channels {
                q = q.bind(c);
            }
            q.bind(self.0.now_ms()).fetch_all(p).await
        })?)
    }

    /// When the next pending row of the channels named becomes due (the
    /// database's clock, Unix ms), if any is pending.
    pub async fn next_due_in(self, channels: &[String]) -> Result<Option<i64>, StoreError> {
        if channels.is_empty() {
            return Ok(None);
        }
        let sql = format!(
            "SELECT MIN(next_attempt_at) FROM outbox WHERE status = 'pending' AND channel IN ({})",
            placeholders(1, channels.len())
        );
        Ok(read!(self.0, |p| {
            let mut q = sqlx::query_scalar::<_, Option<i64>>(AssertSqlSafe(sql.clone()));
            for c in channels {
                q = q.bind(c);
            }
            q.fetch_one(p).await
        })?)
    }

    /// Take row `id` for one delivery attempt, just before it is sent:
    /// false when it is no longer due (delivered, given up, or taken by
    /// another instance since it was read) or when the others took this
    /// instance for dead. Taken, it is not due for `for_ms`, and marked with
    /// this instance, so that a reclaim of the instance frees it at once.
    /// A batch read before a pause is thereby sent only where no one else
    /// sent it meanwhile.
    pub async fn claim(self, id: i64, for_ms: i64) -> Result<bool, StoreError> {
        let now = self.0.now_ms();
        let me = self.0.instance_id();
        let sql = if me.is_some() {
            "UPDATE outbox SET next_attempt_at = $1, instance_id = $4
             WHERE id = $2 AND status = 'pending' AND next_attempt_at <= $3
             AND EXISTS (SELECT 1 FROM instances WHERE id = $4)"
        } else {
            // Not registered (a one-off command): no one reclaims it.
            "UPDATE outbox SET next_attempt_at = $1, instance_id = $4
             WHERE id = $2 AND status = 'pending' AND next_attempt_at <= $3"
        };
        let changed = self
            .0
            .exec(Stmt::new(sql).bind(now + for_ms).bind(id).bind(now).bind(me))
            .await?;
        Ok(changed == 1)
    }

    /// Row `id` was delivered.
    pub async fn mark_delivered(self, id: i64) -> Result<(), StoreError> {
        self.0
            .exec(
                Stmt::new(
                    "UPDATE outbox SET status = 'delivered', delivered_at = $1, attempts = attempts + 1 WHERE id = $2",
                )
                .bind(self.0.now_ms())
                .bind(id),
            )
            .await?;
        Ok(())
    }

    /// Record a failed attempt; the next one is due after `retry_in_ms`.
    pub async fn retry(self, id: i64, retry_in_ms: i64, error: &str) -> Result<(), StoreError> {
        self.0
            .exec(
                Stmt::new(
                    "UPDATE outbox SET attempts = attempts + 1, next_attempt_at = $1, last_error = $2, instance_id = NULL
                     WHERE id = $3 AND status = 'pending'",
                )
                .bind(self.0.now_ms() + retry_in_ms)
                .bind(error)
                .bind(id),
            )
            .await?;
        Ok(())
    }

    /// Stop trying a row the channel keeps refusing for good (status
    /// `failed`, kept for the record with its last error).
    pub async fn give_up(self, id: i64, error: &str) -> Result<(), StoreError> {
        self.0
            .exec(
                Stmt::new(
                    "UPDATE outbox SET status = 'failed', attempts = attempts + 1, last_error = $1, instance_id = NULL
                     WHERE id = $2 AND status = 'pending'",
                )
                .bind(error)
                .bind(id),
            )
            .await?;
        Ok(())
    }

    /// Announcements of a run (delivered or not), for tests and `/subagents info`.
    pub async fn of_run(self, run_id: &str) -> Result<Vec<(OutboxStatus, i64)>, StoreError> {
        let rows = read!(self.0, |p| sqlx::query_as::<_, (String, i64)>(
            "SELECT status, attempts FROM outbox WHERE delivery_key = $1"
        )
        .bind(run_id)
        .fetch_all(p)
        .await)?;
        rows.into_iter()
            .map(|(status, attempts)| Ok((OutboxStatus::try_from(status).map_err(StoreError::Corrupt)?, attempts)))
            .collect()
    }
}

/// The outbox (`outbox`): replies and announcements waiting for delivery.
#[derive(Clone, Copy)]
pub struct Outbox<'s>(&'s Store);

impl Store {
    /// The outbox (`outbox`): replies and announcements waiting for delivery.
    pub fn outbox(&self) -> Outbox<'_> {
        Outbox(self)
    }
}

/// `$first, $first+1, ...` for `n` values.
fn placeholders(first: usize, n: usize) -> String {
    (first..first + n)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}
