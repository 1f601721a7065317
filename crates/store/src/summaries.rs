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
    /// among its own messages. One transaction.
    pub async fn compact(self, key: &str, upto: i64, body: &str) -> Result<(), StoreError> {
        let now = self.0.now_ms();
        self.0
            .exec_all(vec![
                Stmt::new(
                    "INSERT INTO messages (session_key, role, body, created_at) VALUES ($1, 'summary', $2, $3)",
                )
                .bind(key)
                .bind(body)
                .bind(now),
                Stmt::new(
                    "UPDATE sessions SET summary_id = (SELECT MAX(id) FROM messages WHERE session_key = $1 AND role = 'summary'),
                     compacted_upto = $2, updated_at = $3 WHERE key = $1",
                )
                .bind(key)
                .bind(upto)
                .bind(now),
            ])
            .await?;
        Ok(())
    }
}
