//! People let in by pairing code (`pairings`): a stranger's request, its
//! code and deadline, the approver's decision, and a revocation. A person
//! is paired on a channel while a row of theirs there says `paired`.

use crate::stmt::Stmt;
use crate::{Store, StoreError};
use sqlx::{AssertSqlSafe, FromRow};

/// Where a pairing stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PairingStatus {
    /// Waiting for an approver (until `expires_at`).
    Pending,
    /// Let in.
    Paired,
    /// Refused by an approver.
    Denied,
    /// Let in, then sent away (`/unpair`).
    Revoked,
}

stored_words!(PairingStatus, "pairing status", {
    Pending => "pending",
    Paired => "paired",
    Denied => "denied",
    Revoked => "revoked",
});

/// A request about to be stored.
#[derive(Debug, Clone)]
pub struct NewPairing<'a> {
    /// Its id (on buttons: `pair-…`).
    pub id: &'a str,
    /// The channel instance the person wrote on.
    pub channel: &'a str,
    /// The agent they asked to talk to (whose approvers decide).
    pub agent: &'a str,
    /// Their id, as the platform authenticated it.
    pub user_id: &'a str,
    /// The name the platform shows for them.
    pub display_name: &'a str,
    /// Their direct chat (to tell them the outcome).
    pub chat: &'a str,
    /// The code they were given.
    pub code: &'a str,
    /// Who may decide it.
    pub approvers: &'a [String],
    /// How long it may wait (ms).
    pub valid_ms: i64,
    /// At most this many may wait on one channel at once.
    pub max_pending: i64,
}

/// A stored pairing.
#[derive(Debug, Clone, FromRow)]
pub struct PairingRow {
    /// Its id.
    pub id: String,
    /// The channel instance.
    pub channel: String,
    /// The agent they may talk to once paired.
    pub agent: String,
    /// The person's id.
    pub user_id: String,
    /// Their display name.
    pub display_name: String,
    /// Their direct chat.
    pub chat: String,
    /// The code they were given.
    pub code: String,
    /// Who may decide it.
    #[sqlx(try_from = "crate::list::StoredList")]
    pub approvers: Vec<String>,
    /// Where it stands.
    #[sqlx(try_from = "String")]
    pub status: PairingStatus,
    /// When it was asked (Unix ms, control-plane clock).
    pub requested_at: i64,
    /// When a pending request lapses.
    pub expires_at: i64,
    /// Who decided (or revoked).
    pub decided_by: Option<String>,
    /// Where they did (a chat address, `console`).
    pub decided_from: Option<String>,
    /// When.
    pub decided_at: Option<i64>,
    /// The approver channel the request went to.
    pub prompt_channel: Option<String>,
    /// The chat of the request's prompt.
    pub prompt_chat: Option<String>,
    /// The prompt's message id.
    pub prompt_message: Option<String>,
}

impl PairingRow {
    /// Whether it is still waiting at `now_ms`.
    pub fn waiting(&self, now_ms: i64) -> bool {
        self.status == PairingStatus::Pending && self.expires_at > now_ms
    }
}

const COLUMNS: &str =
    "id, channel, agent, user_id, display_name, chat, code, approvers, status, requested_at, expires_at,
     decided_by, decided_from, decided_at, prompt_channel, prompt_chat, prompt_message";

/// What opening a request did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opened {
    /// A new request waits.
    New,
    /// Too many requests wait on this channel (or this person has one).
    Full,
}

impl Pairings<'_> {
    /// Open request `p` unless this person already has one waiting on the
    /// channel or `max_pending` wait there (checked in the same statement).
    pub async fn open(self, p: &NewPairing<'_>) -> Result<Opened, StoreError> {
        let now = self.0.now_ms();
        let n = self
            .0
            .exec(
                Stmt::new(
                    "INSERT INTO pairings (id, channel, user_id, display_name, chat, code, approvers, status,
                                       requested_at, expires_at, agent)
                 SELECT $1, $2, $3, $4, $5, $6, $7, 'pending', $8, $9, $11
                 WHERE (SELECT COUNT(*) FROM pairings WHERE channel = $2 AND status = 'pending' AND expires_at > $8) < $10
                   AND NOT EXISTS (SELECT 1 FROM pairings
                                   WHERE channel = $2 AND user_id = $3 AND status = 'pending' AND expires_at > $8)",
                )
                .bind(p.id)
                .bind(p.channel)
                .bind(p.user_id)
                .bind(p.display_name)
                .bind(p.chat)
                .bind(p.code)
                .bind(crate::list::encode(p.approvers))
                .bind(now)
                .bind(now + p.valid_ms)
                .bind(p.max_pending)
                .bind(p.agent),
            )
            .await?;
        Ok(if n == 1 { Opened::New } else { Opened::Full })
    }

    /// Remember where request `id`'s prompt was posted.
    pub async fn set_prompt(self, id: &str, channel: &str, chat: &str, message: &str) -> Result<(), StoreError> {
        self.0
            .exec(
                Stmt::new(
                    "UPDATE pairings SET prompt_channel = $1, prompt_chat = $2, prompt_message = $3 WHERE id = $4",
                )
                .bind(channel)
                .bind(chat)
                .bind(message)
                .bind(id),
            )
            .await?;
        Ok(())
    }

    /// Decide a waiting request: `Paired` or `Denied`. False when it no
    /// longer waits (decided by someone else first, or lapsed).
    pub async fn decide(self, id: &str, status: PairingStatus, by: &str, from: &str) -> Result<bool, StoreError> {
        let now = self.0.now_ms();
        let n = self
            .0
            .exec(
                Stmt::new(
                    "UPDATE pairings SET status = $1, decided_by = $2, decided_from = $3, decided_at = $4
                     WHERE id = $5 AND status = 'pending' AND expires_at > $4",
                )
                .bind(status.as_str())
                .bind(by)
                .bind(from)
                .bind(now)
                .bind(id),
            )
            .await?;
        Ok(n == 1)
    }

    /// Send `user_id` away on every channel (or on `channel`): paired rows
    /// become revoked, waiting ones denied. Returns how many changed.
    pub async fn revoke(self, user_id: &str, by: &str, from: &str) -> Result<u64, StoreError> {
        self.0
            .exec(
                Stmt::new(
                    "UPDATE pairings SET status = CASE WHEN status = 'paired' THEN 'revoked' ELSE 'denied' END,
                            decided_by = $1, decided_from = $2, decided_at = $3
                     WHERE user_id = $4 AND status IN ('paired', 'pending')",
                )
                .bind(by)
                .bind(from)
                .bind(self.0.now_ms())
                .bind(user_id),
            )
            .await
    }

    /// Whether `user_id` is paired with `agent` on `channel`.
    pub async fn paired(self, channel: &str, user_id: &str, agent: &str) -> Result<bool, StoreError> {
        let (n,): (i64,) = read!(self.0, |p| sqlx::query_as(
            "SELECT COUNT(*) FROM pairings WHERE channel = $1 AND user_id = $2 AND agent = $3 AND status = 'paired'"
        )
        .bind(channel)
        .bind(user_id)
        .bind(agent)
        .fetch_one(p)
        .await)?;
        Ok(n > 0)
    }

    /// People paired now (with any agent, anywhere), most recent first.
    pub async fn paired_now(self, limit: i64) -> Result<Vec<PairingRow>, StoreError> {
        Ok(read!(self.0, |p| sqlx::query_as::<_, PairingRow>(AssertSqlSafe(
            format!(
                "SELECT {COLUMNS} FROM pairings WHERE status = 'paired' ORDER BY decided_at DESC, id LIMIT {limit}",
            )
        ))
        .fetch_all(p)
        .await)?)
    }

    /// The latest request of `user_id` on `channel`.
    pub async fn latest(self, channel: &str, user_id: &str) -> Result<Option<PairingRow>, StoreError> {
        Ok(read!(self.0, |p| {
            sqlx::query_as::<_, PairingRow>(AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM pairings WHERE channel = $1 AND user_id = $2 ORDER BY requested_at DESC, id LIMIT 1"
        )))
        .bind(channel)
        .bind(user_id)
        .fetch_optional(p)
        .await
        })?)
    }

    /// Request `id`.
    pub async fn get(self, id: &str) -> Result<Option<PairingRow>, StoreError> {
        Ok(read!(self.0, |p| sqlx::query_as::<_, PairingRow>(AssertSqlSafe(
            format!("SELECT {COLUMNS} FROM pairings WHERE id = $1")
        ))
        .bind(id)
        .fetch_optional(p)
        .await)?)
    }

    /// Requests still waiting (not lapsed), oldest first.
    pub async fn waiting(self) -> Result<Vec<PairingRow>, StoreError> {
        Ok(read!(self.0, |p| sqlx::query_as::<_, PairingRow>(AssertSqlSafe(
            format!(
                "SELECT {COLUMNS} FROM pairings WHERE status = 'pending' AND expires_at > $1 ORDER BY requested_at, id"
            )
        ))
        .bind(self.0.now_ms())
        .fetch_all(p)
        .await)?)
    }

    /// The most recent rows, newest first (the console's and `/people`'s list).
    pub async fn recent(self, limit: i64) -> Result<Vec<PairingRow>, StoreError> {
        Ok(read!(self.0, |p| sqlx::query_as::<_, PairingRow>(AssertSqlSafe(
            format!("SELECT {COLUMNS} FROM pairings ORDER BY requested_at DESC, id LIMIT {limit}",)
        ))
        .fetch_all(p)
        .await)?)
    }
}

/// People let in by pairing code (`pairings`).
#[derive(Clone, Copy)]
pub struct Pairings<'s>(&'s Store);

impl Store {
    /// People let in by pairing code (`pairings`).
    pub fn pairings(&self) -> Pairings<'_> {
        Pairings(self)
    }
}
