//! Durable inbound: the messages the gateway took from its channels.
//!
//! A message is written here together with its channel's cursor (one
//! transaction), so a crash either leaves the message to be taken again
//! from the platform or keeps it here. It is marked done together with its
//! reply's outbox row, so a crash after that finds the reply queued, and a
//! crash before finds the message still pending. The platform's message id
//! is unique per chat, so a redelivered message is taken once.

use crate::outbox::OutboxStatus;
use crate::stmt::Stmt;
use crate::{Store, StoreError};
use sqlx::FromRow;

/// One message to take.
#[derive(Debug, Clone)]
pub struct NewInbound {
    /// Our id for it (the router and the transcript refer to it).
    pub key: String,
    /// The channel instance it came from.
    pub channel: String,
    /// The chat it was written in.
    pub chat: String,
    /// The platform's id of the message.
    pub platform_id: String,
    /// Who wrote it.
    pub sender: String,
    /// The message as the adapter saw it (opaque JSON to the store).
    pub body: String,
}

/// A taken message not answered yet.
#[derive(Debug, Clone, FromRow)]
pub struct InboxRow {
    /// Its inbox key.
    pub key: String,
    /// The message as the adapter saw it (JSON).
    pub body: String,
    /// When it was taken (Unix ms).
    pub received_at: i64,
    /// The life of this process it was adopted in (`Store::life`).
    #[sqlx(skip)]
    pub life: u64,
}

/// What `Inbox::take` wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Took {
    /// For each message: whether it is new (false for one taken before: a
    /// redelivery).
    pub fresh: Vec<bool>,
    /// The life of this process the rows were written in (`Store::life`),
    /// read with the instance id they carry.
    pub life: u64,
}

/// A reply to queue with the done mark of the message it answers.
#[derive(Debug, Clone)]
pub struct QueuedReply<'a> {
    /// The channel instance it came from.
    pub channel: &'a str,
    /// The chat it was written in.
    pub chat: &'a str,
    /// The thread to answer in.
    pub thread: Option<&'a str>,
    /// The platform id of the message answered.
    pub reply_to: Option<&'a str>,
    /// The message as the adapter saw it (JSON).
    pub body: &'a str,
}

/// How long the instance that queued a reply has to deliver it before the
/// outbox worker may try: longer than its tries in memory take, so the two
/// never send it side by side. (When the instance is gone, `reclaim` hands
/// the row over at once; when its tries fail, `reply_to_outbox` does.)
const DELIVERY_LEASE_MS: i64 = 600_000;

/// The oldest schema whose builds read the rows this build writes: every
/// kind of message this build stores is read by every build from schema
/// 13 on. A new kind of row is written with the schema that introduced it,
/// so an older instance of a cluster being upgraded never adopts (and
/// misreads) it: it waits for a newer one (docs/operations.md, "Upgrades").
const ROWS_NEED_SCHEMA: i64 = 0;

/// The outbox key of the reply to inbox row `key`.
pub fn reply_key(key: &str) -> String {
    format!("reply:{key}")
}

impl<'s> Inbox<'s> {
    /// Take `messages` of `channel` and move its cursor to `cursor` (when
    /// given), all in one transaction, under this process's instance id:
    /// refused (an error) when the others took the process for dead, so
    /// that nothing is stored under an id whose work they reclaimed.
    pub async fn take(
        self,
        channel: &str,
        messages: &[NewInbound],
        cursor: Option<&str>,
        fence: Option<i64>,
    ) -> Result<Took, StoreError> {
        let now = self.0.now_ms();
        let (me, life) = self.0.identity();
        // The fenced cursor goes first: a lost lease fails the take at once.
        let fenced = match (cursor, fence, me) {
            (Some(c), Some(g), Some(me)) => Some(crate::leases::fenced_cursor_stmt(channel, c, me, g)),
            _ => None,
        };
        let skip = usize::from(fenced.is_some());
        let mut stmts: Vec<Stmt> = fenced.into_iter().collect();
        stmts.extend(messages.iter().map(|m| {
            Stmt::new(
                "INSERT INTO inbox (key, channel, chat, platform_id, sender, body, status, instance_id, received_at, needs_schema)
                     VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7, $8, $9) ON CONFLICT DO NOTHING",
            )
            .bind(&m.key)
            .bind(&m.channel)
            .bind(&m.chat)
            .bind(&m.platform_id)
            .bind(&m.sender)
            .bind(&m.body)
            .bind(me)
            .bind(now)
            .bind(ROWS_NEED_SCHEMA)
        }));
        if let (Some(c), None) = (cursor, fence) {
            stmts.push(crate::cursors::cursor_stmt(channel, c));
        }
        // Without a fence, the instance's row must still be there (a lost
        // instance fails the take); written last, so that its row lock is
        // held only until the commit. Only a cluster's peers take an
        // instance for dead: SQLite serves one process (a second is refused).
        let shared = self.0.backend() == crate::Backend::Postgres;
        if let (0, false, Some(me), true) = (skip, messages.is_empty(), me, shared) {
            stmts.push(
                Stmt::new("UPDATE instances SET heartbeat_at = heartbeat_at WHERE id = $1")
                    .bind(me)
                    .required(),
            );
        }
        if stmts.is_empty() {
            return Ok(Took {
                fresh: Vec::new(),
                life,
            });
        }
        let changed = self.0.exec_all(stmts).await?;
        let fresh = changed
            .iter()
            .skip(skip)
            .take(messages.len())
            .map(|n| *n == 1)
            .collect();
        Ok(Took { fresh, life })
    }

    /// Mark inbox row `key` answered and queue `reply` (when there is one),
    /// in one transaction. The reply is this instance's to deliver now
    /// (then `reply_delivered`, or `reply_to_outbox` when it cannot).
    pub async fn finish(self, key: &str, reply: Option<&QueuedReply<'_>>) -> Result<bool, StoreError> {
        self.finish_turn(key, &[], reply).await
    }

    /// `finish` for a turn that answered several messages of one person:
    /// `merged` (the earlier ones) are marked done in the same transaction,
    /// so after a crash either all of them wait to be answered or none.
    pub async fn finish_turn(
        self,
        key: &str,
        merged: &[String],
        reply: Option<&QueuedReply<'_>>,
    ) -> Result<bool, StoreError> {
        let now = self.0.now_ms();
        // Only while the row is still this instance's: one that stalled
        // past its lease and lost the row to another sends nothing.
        let done = match self.0.instance_id() {
            Some(me) => Stmt::new(
                "UPDATE inbox SET status = 'done', done_at = $1 WHERE key = $2 AND status = 'pending' AND instance_id = $3
                 AND EXISTS (SELECT 1 FROM instances me WHERE me.id = $3)",
            )
            .bind(now)
            .bind(key)
            .bind(me),
            None => Stmt::new(
                "UPDATE inbox SET status = 'done', done_at = $1 WHERE key = $2 AND status = 'pending' AND instance_id IS NULL",
            )
            .bind(now)
            .bind(key),
        };
        let mut stmts = vec![done];
        // The merged messages only with the answered one (which is done
        // only while it is still this instance's).
        stmts.extend(merged.iter().map(|k| {
            Stmt::new(
                "UPDATE inbox SET status = 'done', done_at = $1 WHERE key = $2 AND status = 'pending'
                 AND EXISTS (SELECT 1 FROM inbox WHERE key = $3 AND status = 'done' AND done_at = $1)",
            )
            .bind(now)
            .bind(k.clone())
            .bind(key.to_string())
        }));
        if let Some(r) = reply {
            stmts.push(
                Stmt::new(
                    "INSERT INTO outbox (delivery_key, channel, chat, thread, reply_to, body, status, attempts, next_attempt_at, created_at, instance_id)
                     SELECT $1, $2, $3, $4, $5, $6, 'pending', 0, $7, $8, $9
                     WHERE EXISTS (SELECT 1 FROM inbox WHERE key = $10 AND status = 'done' AND done_at = $8)
                     ON CONFLICT (delivery_key) DO NOTHING",
                )
                .bind(reply_key(key))
                .bind(r.channel)
                .bind(r.chat)
                .bind(r.thread)
                .bind(r.reply_to)
                .bind(r.body)
                .bind(now + DELIVERY_LEASE_MS)
                .bind(now)
                .bind(self.0.instance_id())
                .bind(key),
            );
        }
        let changed = self.0.exec_all(stmts).await?;
        Ok(changed.first() == Some(&1))
    }

    /// Whether child run `id` may still act here: running and this
    /// instance's, or not a recorded run at all.
    pub async fn run_still_mine(self, id: &str) -> Result<bool, StoreError> {
        let row: Option<(String, Option<String>)> = read!(self.0, |p| {
            sqlx::query_as(
            "SELECT CASE WHEN instance_id IS NULL OR EXISTS (SELECT 1 FROM instances i WHERE i.id = runs.instance_id)
                    THEN status ELSE 'orphaned' END, instance_id FROM runs WHERE id = $1"
        )
        .bind(id)
        .fetch_optional(p)
        .await
        })?;
        Ok(match row {
            None => true,
            Some((status, owner)) => status == "running" && owner.as_deref() == self.0.instance_id(),
        })
    }

    /// Whether inbox row `key` is still pending and this instance's (a
    /// row of no instance counts as this one's when this one has no id).
    pub async fn still_mine(self, key: &str) -> Result<bool, StoreError> {
        // The row names this instance, and this instance is registered
        // still (one taken for dead must not act before it notices).
        let owner: Option<Option<String>> = read!(self.0, |p| sqlx::query_scalar(
            "SELECT instance_id FROM inbox WHERE key = $1 AND status = 'pending'
             AND (instance_id IS NULL OR EXISTS (SELECT 1 FROM instances i WHERE i.id = inbox.instance_id))"
        )
        .bind(key)
        .fetch_optional(p)
        .await)?;
        Ok(matches!(owner, Some(o) if o.as_deref() == self.0.instance_id()))
    }

    /// The reply to inbox row `key` was delivered: marked with the others
    /// delivered meanwhile, without waiting (see `marks`).
    pub fn reply_delivered(self, key: &str) {
        self.0.mark_delivered_soon(reply_key(key));
    }

    /// The reply to inbox row `key` was refused for good (the platform
    /// will not take it); kept for the record, not retried.
    pub async fn reply_refused(self, key: &str, error: &str) -> Result<(), StoreError> {
        self.end_reply(key, OutboxStatus::Refused, Some(error)).await
    }

    async fn end_reply(self, key: &str, status: OutboxStatus, error: Option<&str>) -> Result<(), StoreError> {
        self.0.exec(
            Stmt::new(
                "UPDATE outbox SET status = $1, delivered_at = $2, attempts = attempts + 1, last_error = $3, instance_id = NULL
                 WHERE delivery_key = $4",
            )
            .bind(status.as_str())
            .bind(self.0.now_ms())
            .bind(error)
            .bind(reply_key(key)),
        )
        .await?;
        Ok(())
    }

    /// The reply to inbox row `key` could not be delivered now: the outbox
    /// worker takes it over.
    pub async fn reply_to_outbox(self, key: &str, error: &str) -> Result<(), StoreError> {
        // Only while it is still this instance's: once it was taken for
        // dead, the reply is the outbox's already, and perhaps on its way.
        let sql = match self.0.instance_id() {
            Some(_) => {
                "UPDATE outbox SET next_attempt_at = $1, attempts = attempts + 1, last_error = $2, instance_id = NULL
                 WHERE delivery_key = $3 AND status = 'pending' AND instance_id = $4"
            }
            None => {
                "UPDATE outbox SET next_attempt_at = $1, attempts = attempts + 1, last_error = $2, instance_id = NULL
                 WHERE delivery_key = $3 AND status = 'pending' AND instance_id IS NULL AND $4 IS NULL"
            }
        };
        self.0
            .exec(
                Stmt::new(sql)
                    .bind(self.0.now_ms())
                    .bind(error)
                    .bind(reply_key(key))
                    .bind(self.0.instance_id()),
            )
            .await?;
        self.0.wake_outbox();
        Ok(())
    }

    /// Make the pending messages of instances that are gone (or of no
    /// instance) this instance's, and return them oldest first. Only a
    /// process that routes messages (`run`) adopts them.
    pub async fn adopt_orphans(self) -> Result<Vec<InboxRow>, StoreError> {
        let (Some(me), life) = self.0.identity() else {
            return Ok(Vec::new());
        };
        let orphans: Vec<InboxRow> = read!(self.0, |p| sqlx::query_as::<_, InboxRow>(
            "SELECT key, body, received_at FROM inbox WHERE status = 'pending' AND needs_schema <= $1
             AND (instance_id IS NULL OR NOT EXISTS (SELECT 1 FROM instances i WHERE i.id = inbox.instance_id))
             ORDER BY id"
        )
        .bind(self.0.schema())
        .fetch_all(p)
        .await)?;
        if orphans.is_empty() {
            return Ok(orphans);
        }
        // Each row is taken only if still orphaned: of two instances
        // adopting at once, one gets it.
        let stmts = orphans
            .iter()
            .map(|r| {
                Stmt::new(
                    "UPDATE inbox SET instance_id = $1 WHERE key = $2 AND status = 'pending' AND (instance_id IS NULL
                     OR NOT EXISTS (SELECT 1 FROM instances i WHERE i.id = inbox.instance_id))
                     AND EXISTS (SELECT 1 FROM instances me WHERE me.id = $1)",
                )
                .bind(me)
                .bind(&r.key)
            })
            .collect();
        let changed = self.0.exec_all(stmts).await?;
        Ok(orphans
            .into_iter()
            .zip(changed)
            .filter(|(_, n)| *n == 1)
            .map(|(r, _)| InboxRow { life, ..r })
            .collect())
    }

    /// Forget answered messages older than `retention_ms`.
    pub async fn prune(self, retention_ms: i64) -> Result<u64, StoreError> {
        self.0
            .exec(
                Stmt::new("DELETE FROM inbox WHERE status = 'done' AND done_at < $1")
                    .bind(self.0.now_ms() - retention_ms),
            )
            .await
    }

    /// How many rows the inbox holds (`pending`, `done`), for tests and status.
    pub async fn counts(self) -> Result<(i64, i64), StoreError> {
        let rows: Vec<(String, i64)> = read!(self.0, |p| sqlx::query_as(
            "SELECT status, COUNT(*) FROM inbox GROUP BY status"
        )
        .fetch_all(p)
        .await)?;
        let of = |s: &str| rows.iter().find(|(k, _)| k == s).map_or(0, |(_, n)| *n);
        Ok((of("pending"), of("done")))
    }
}

/// The durable inbound table (`inbox`): messages taken, answered, adopted.
#[derive(Clone, Copy)]
pub struct Inbox<'s>(&'s Store);

impl Store {
    /// The durable inbound table (`inbox`): messages taken, answered, adopted.
    pub fn inbox(&self) -> Inbox<'_> {
        Inbox(self)
    }
}
