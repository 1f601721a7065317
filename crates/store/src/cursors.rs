//! Channel cursors: where each channel resumes (Telegram update offset,
//! Matrix sync token), so a restart neither loses nor repeats messages.

use crate::stmt::Stmt;
use crate::{Store, StoreError};

impl Store {
    /// Where `channel` resumes, if it ran before.
    pub async fn cursor(&self, channel: &str) -> Result<Option<String>, StoreError> {
        Ok(read!(self, |p| sqlx::query_scalar(
            "SELECT cursor FROM channel_cursors WHERE channel = $1"
        )
        .bind(channel)
        .fetch_optional(p)
        .await)?)
    }

    /// Move `channel`'s resume position.
    pub async fn set_cursor(&self, channel: &str, cursor: &str) -> Result<(), StoreError> {
        self.exec(cursor_stmt(channel, cursor)).await?;
        Ok(())
    }
}

/// The write that moves `channel`'s cursor to `cursor`.
pub(crate) fn cursor_stmt(channel: &str, cursor: &str) -> Stmt {
    Stmt::new(
        "INSERT INTO channel_cursors (channel, cursor, updated_at) VALUES ($1, $2, $3)
         ON CONFLICT (channel) DO UPDATE SET cursor = excluded.cursor, updated_at = excluded.updated_at",
    )
    .bind(channel)
    .bind(cursor)
    .bind(crate::now_ms())
}
