//! Compaction's part of the transcript: a `summary` message that stands,
//! for the model, in place of the oldest part of a conversation (the
//! messages it replaces stay stored; docs/conversations.md).

use crate::StoreError;
use crate::sessions::Sessions;
use crate::stmt::Stmt;

impl Sessions<'_> {
    /// Store `body` as the summary of the conversation up to message
    /// `upto` (inclusive); from now on the history starts with it. It
    /// belongs to no turn, so a turn recovered after a crash never sees it
    /// among its own messages. One transaction, and only while nothing
    /// overtook it: `false` (nothing stored) when `/new` started afresh or
    /// another compaction already went as far since the history was read.
    pub async fn compact(self, key: &str, upto: i64, body: &str) -> Result<bool, StoreError> {
        let now = self.0.now_ms();
        let written = self
            .0
            .exec_all(vec![
                Stmt::new(
                    "INSERT INTO messages (session_key, role, body, created_at) VALUES ($1, 'summary', $2, $3)",
                )
                .bind(key)
                .bind(body)
                .bind(now),
                // This summary by its text (a summary another compaction
                // wrote at the same time has another), and only while the
                // conversation still starts before `upto`.
                Stmt::new(
                    "UPDATE sessions SET summary_id = (SELECT MAX(id) FROM messages WHERE session_key = $1 AND role = 'summary' AND body = $2),
                     compacted_upto = $3, updated_at = $4
                     WHERE key = $1 AND history_from < $3 AND COALESCE(compacted_upto, 0) < $3",
                )
                .bind(key)
                .bind(body)
                .bind(upto)
                .bind(now)
                .required(),
            ])
            .await;
        match written {
            Ok(_) => Ok(true),
            Err(StoreError::NotChanged) => Ok(false),
            Err(e) => Err(e),
        }
    }
}
