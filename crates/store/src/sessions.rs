//! Sessions and their transcripts. A message body is opaque JSON owned by
//! the runtime; the store keeps it in order.

use crate::sqlite_read::InlineRow;
use crate::stmt::Stmt;
use crate::{Store, StoreError};
use sqlx::{AssertSqlSafe, FromRow};

/// A stored session.
#[derive(Debug, Clone, FromRow)]
pub struct SessionInfo {
    /// The session key.
    pub key: String,
    /// The agent it belongs to.
    pub agent: String,
    /// Its channel, for chat sessions.
    pub channel: Option<String>,
    /// Its chat.
    pub chat: Option<String>,
    /// Its thread.
    pub thread: Option<String>,
    /// A provider chosen with `model_switch`.
    pub model_override: Option<String>,
    /// Messages up to this id are before the last `/new`.
    pub history_from: i64,
    /// When it was created (Unix ms).
    pub created_at: i64,
    /// Last use (Unix ms).
    pub updated_at: i64,
}

/// One transcript message.
#[derive(Debug, Clone, FromRow)]
pub struct StoredMessage {
    /// Message id (order).
    pub id: i64,
    /// `user`, `assistant`, `tool`, `system` or `summary` (a compaction's).
    pub role: String,
    /// The message (JSON owned by the runtime).
    pub body: String,
    /// When it was created (Unix ms).
    pub created_at: i64,
}

impl InlineRow for SessionInfo {
    fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            key: r.get(0)?,
            agent: r.get(1)?,
            channel: r.get(2)?,
            chat: r.get(3)?,
            thread: r.get(4)?,
            model_override: r.get(5)?,
            history_from: r.get(6)?,
            created_at: r.get(7)?,
            updated_at: r.get(8)?,
        })
    }
}

impl InlineRow for StoredMessage {
    fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            id: r.get(0)?,
            role: r.get(1)?,
            body: r.get(2)?,
            created_at: r.get(3)?,
        })
    }
}

/// Where a session's conversation happens (none of it for sessions of
/// no chat).
#[derive(Debug, Clone, Copy, Default)]
pub struct SessionPlace<'a> {
    /// The channel instance.
    pub channel: Option<&'a str>,
    /// The chat in it.
    pub chat: Option<&'a str>,
    /// The thread or topic in the chat.
    pub thread: Option<&'a str>,
}

const CREATE: &str = "INSERT INTO sessions (key, agent, channel, chat, thread, history_from, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, 0, $6, $7) ON CONFLICT (key) DO NOTHING";
const CREATE_OR_TOUCH: &str =
    "INSERT INTO sessions (key, agent, channel, chat, thread, history_from, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, 0, $6, $7) ON CONFLICT (key) DO UPDATE SET updated_at = excluded.updated_at";

impl<'s> Sessions<'s> {
    /// Create the session if it does not exist yet.
    pub async fn ensure(
        self,
        key: &str,
        agent: &str,
        channel: Option<&str>,
        chat: Option<&str>,
        thread: Option<&str>,
    ) -> Result<(), StoreError> {
        let place = SessionPlace { channel, chat, thread };
        self.0.exec(self.session_row(CREATE, key, agent, place)).await?;
        Ok(())
    }

    /// `sql` (`CREATE` or `CREATE_OR_TOUCH`) for session `key` now.
    fn session_row(self, sql: &'static str, key: &str, agent: &str, place: SessionPlace<'_>) -> Stmt {
        let now = self.0.now_ms();
        Stmt::new(sql)
            .bind(key)
            .bind(agent)
            .bind(place.channel)
            .bind(place.chat)
            .bind(place.thread)
            .bind(now)
            .bind(now)
    }

    /// Session `key`, if stored.
    pub async fn get(self, key: &str) -> Result<Option<SessionInfo>, StoreError> {
        const SQL: &str =
            "SELECT key, agent, channel, chat, thread, model_override, history_from, created_at, updated_at
             FROM sessions WHERE key = $1";
        // Read by every turn: on this thread when it can (sqlite_read.rs).
        if let Some(rows) = self.0.read_inline::<SessionInfo>(SQL, &[key.into()]) {
            return Ok(rows?.into_iter().next());
        }
        Ok(read!(self.0, |p| sqlx::query_as::<_, SessionInfo>(SQL)
            .bind(key)
            .fetch_optional(p)
            .await)?)
    }

    /// Append one message to a session's transcript.
    pub async fn append(self, session_key: &str, role: &str, body: &str) -> Result<(), StoreError> {
        self.append_turn(session_key, None, &[(role, body.to_string())]).await
    }

    /// Append several messages at once (a turn's tool results): one
    /// transaction, so all or none are stored.
    pub async fn append_all(self, session_key: &str, messages: &[(&str, String)]) -> Result<(), StoreError> {
        self.append_turn(session_key, None, messages).await
    }

    /// Append messages of the turn `turn` (the inbound message that started
    /// it), so what an interrupted turn did can be found after a crash.
    pub async fn append_turn(
        self,
        session_key: &str,
        turn: Option<&str>,
        messages: &[(&str, String)],
    ) -> Result<(), StoreError> {
        let stmts = self.message_rows(session_key, turn, messages);
        self.0.exec_all(stmts).await?;
        Ok(())
    }

    /// A turn of session `key` of `agent` opens with `messages` (what the
    /// person asked): the session is created at `place` if missing, its
    /// last activity is now, and the messages are appended as by
    /// `append_turn`; one write, all or nothing.
    pub async fn open_turn(
        self,
        (key, agent, place): (&str, &str, SessionPlace<'_>),
        turn: Option<&str>,
        messages: &[(&str, String)],
    ) -> Result<(), StoreError> {
        let mut stmts = Vec::with_capacity(messages.len() + 1);
        stmts.push(self.session_row(CREATE_OR_TOUCH, key, agent, place));
        stmts.extend(self.message_rows(key, turn, messages));
        self.0.exec_all(stmts).await?;
        Ok(())
    }

    fn message_rows(self, session_key: &str, turn: Option<&str>, messages: &[(&str, String)]) -> Vec<Stmt> {
        const INSERT: &str =
            "INSERT INTO messages (session_key, role, body, created_at, turn) VALUES ($1, $2, $3, $4, $5)";
        let now = self.0.now_ms();
        messages
            .iter()
            .map(|(role, body)| {
                Stmt::new(INSERT)
                    .bind(session_key)
                    .bind(*role)
                    .bind(body)
                    .bind(now)
                    .bind(turn)
            })
            .collect()
    }

    /// The transcript messages of one turn, oldest first.
    pub async fn turn_messages(self, session_key: &str, turn: &str) -> Result<Vec<StoredMessage>, StoreError> {
        Ok(read!(self.0, |p| sqlx::query_as::<_, StoredMessage>(
            "SELECT id, role, body, created_at FROM messages WHERE session_key = $1 AND turn = $2 ORDER BY id",
        )
        .bind(session_key)
        .bind(turn)
        .fetch_all(p)
        .await)?)
    }

    /// Forget what an interrupted turn wrote to the transcript (it is run
    /// again from the start).
    pub async fn forget_turn(self, session_key: &str, turn: &str) -> Result<u64, StoreError> {
        self.0
            .exec(
                Stmt::new("DELETE FROM messages WHERE session_key = $1 AND turn = $2")
                    .bind(session_key)
                    .bind(turn),
            )
            .await
    }

    /// The current conversation of a session (since the last `/new`), oldest
    /// first, at most the last `limit` messages. When it was compacted, its
    /// summary (role `summary`) comes first, and the messages it replaces
    /// are left out.
    pub async fn history(self, session_key: &str, limit: i64) -> Result<Vec<StoredMessage>, StoreError> {
        // The limit is written into the statement, not bound (stmt.rs).
        // The summary is read on its own and the recent messages from the
        // session's index backwards, past the last `/new` and the last
        // compaction: a turn reads at most `limit` rows however long the
        // conversation is (one LEFT JOIN read every message since `/new`
        // and sorted them).
        let sql = format!(
            "SELECT id, role, body, created_at FROM (
                 SELECT m.id, m.role, m.body, m.created_at, 0 AS part FROM messages m
                 JOIN sessions s ON s.key = m.session_key
                 WHERE s.key = $1 AND m.id = s.summary_id AND m.id > s.history_from
                 UNION ALL
                 SELECT id, role, body, created_at, part FROM (
                     SELECT m.id, m.role, m.body, m.created_at, 1 AS part FROM messages m
                     WHERE m.session_key = $1 AND m.role <> 'summary'
                       AND m.id > COALESCE((SELECT CASE WHEN COALESCE(s.compacted_upto, 0) > s.history_from
                                                   THEN s.compacted_upto ELSE s.history_from END
                                            FROM sessions s WHERE s.key = $1), 0)
                     ORDER BY m.id DESC LIMIT {limit}
                 ) AS recent
             ) AS window_rows ORDER BY part, id DESC LIMIT {limit}",
        );
        // Read by every turn: on this thread when it can (sqlite_read.rs).
        let mut rows = match self.0.read_inline::<StoredMessage>(&sql, &[session_key.into()]) {
            Some(rows) => rows?,
            None => read!(self.0, |p| sqlx::query_as::<_, StoredMessage>(AssertSqlSafe(
                sql.clone()
            ))
            .bind(session_key)
            .fetch_all(p)
            .await)?,
        };
        let summary = rows.first().is_some_and(|r| r.role == "summary");
        rows[usize::from(summary)..].reverse();
        Ok(rows)
    }

    /// Every message since the last `/new` in the order written, the ones a
    /// summary replaced and the summaries included; at most the last `limit`.
    pub async fn transcript(self, session_key: &str, limit: i64) -> Result<Vec<StoredMessage>, StoreError> {
        let sql = format!(
            "SELECT m.id, m.role, m.body, m.created_at FROM messages m
             LEFT JOIN sessions s ON s.key = m.session_key
             WHERE m.session_key = $1 AND m.id > COALESCE(s.history_from, 0)
             ORDER BY m.id DESC LIMIT {limit}",
        );
        let mut rows = read!(self.0, |p| sqlx::query_as::<_, StoredMessage>(AssertSqlSafe(
            sql.clone()
        ))
        .bind(session_key)
        .fetch_all(p)
        .await)?;
        rows.reverse();
        Ok(rows)
    }

    /// Start a fresh conversation; the old transcript stays stored.
    pub async fn reset(self, key: &str) -> Result<(), StoreError> {
        let last: Option<i64> = read!(self.0, |p| sqlx::query_scalar(
            "SELECT MAX(id) FROM messages WHERE session_key = $1"
        )
        .bind(key)
        .fetch_one(p)
        .await)?;
        self.0
            .exec(
                Stmt::new(
                    "UPDATE sessions SET history_from = $1, summary_id = NULL, compacted_upto = NULL, updated_at = $2 WHERE key = $3",
                )
                    .bind(last.unwrap_or(0))
                    .bind(self.0.now_ms())
                    .bind(key),
            )
            .await?;
        Ok(())
    }

    /// Remember (or clear) the provider a session switched to with `model_switch`.
    pub async fn set_model_override(self, key: &str, provider: Option<&str>) -> Result<(), StoreError> {
        self.0
            .exec(
                Stmt::new("UPDATE sessions SET model_override = $1, updated_at = $2 WHERE key = $3")
                    .bind(provider)
                    .bind(self.0.now_ms())
                    .bind(key),
            )
            .await?;
        Ok(())
    }
}

/// Conversations and their transcripts (`sessions`, `messages`).
#[derive(Clone, Copy)]
pub struct Sessions<'s>(pub(crate) &'s Store);

impl Store {
    /// Conversations and their transcripts (`sessions`, `messages`).
    pub fn sessions(&self) -> Sessions<'_> {
        Sessions(self)
    }
}
