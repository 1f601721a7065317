//! Channel cursors: where each channel resumes (Telegram update offset,
//! Matrix sync token), so a restart neither loses nor repeats messages.

use crate::stmt::Stmt;
use crate::{Store, StoreError};

impl<'s> Cursors<'s> {
    /// Where `channel` resumes, if it ran before.
    pub async fn get(self, channel: &str) -> Result<Option<String>, StoreError> {
        Ok(read!(self.0, |p| sqlx::query_scalar(
            "SELECT cursor FROM channel_cursors WHERE channel = $1"
        )
        .bind(channel)
        .fetch_optional(p)
        .await)?)
    }

    /// Move `channel`'s resume position.
    pub async fn set(self, channel: &str, cursor: &str) -> Result<(), StoreError> {
        self.0.exec(cursor_stmt(channel, cursor)).await?;
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

/// Channel cursors (`cursors`).
#[derive(Clone, Copy)]
pub struct Cursors<'s>(&'s Store);

impl Store {
    /// Channel cursors (`cursors`).
    pub fn cursors(&self) -> Cursors<'_> {
        Cursors(self)
    }
}
