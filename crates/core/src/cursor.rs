//! Where channels keep their resume position (Telegram update offset,
//! Matrix sync token), so a restart neither loses nor repeats messages. The
//! gateway implements it over the control-plane store.

use async_trait::async_trait;

#[async_trait]
pub trait CursorStore: Send + Sync {
    async fn load(&self, channel: &str) -> Option<String>;
    async fn save(&self, channel: &str, cursor: &str);
}
