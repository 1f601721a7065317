//! Where a channel hands what people sent: the gateway's durable inbox.
//!
//! A channel offers a batch of messages together with its resume position
//! after them (Telegram's update offset, Matrix's sync token). The gateway
//! writes both in one transaction: once `take` returns `Ok`, the messages
//! are answered even if the process dies the next instant; on `Err` nothing
//! was taken and the cursor did not move, so the channel offers the same
//! messages again later. A message offered twice (same chat, same platform
//! message id) is taken once.

use crate::Inbound;
use async_trait::async_trait;

#[derive(Debug, Clone, thiserror::Error)]
#[error("the gateway could not take the messages: {0}")]
/// The gateway could not take a batch (its store failed); offer it again.
pub struct IntakeError(pub String);

#[async_trait]
/// The gateway's side of receiving (see the module doc).
pub trait Intake: Send + Sync {
    /// Where `channel` resumes, if it ran before.
    async fn cursor(&self, channel: &str) -> Result<Option<String>, IntakeError>;

    /// Take `messages` of `channel` and move its cursor to `cursor` (when
    /// given), as one step.
    async fn take(&self, channel: &str, messages: Vec<Inbound>, cursor: Option<String>) -> Result<(), IntakeError>;

    /// `channel` reached its platform (`Ok`) or lost it (`Err`, why), for
    /// the operator's health view. Cheap; adapters may call it on every
    /// poll.
    fn connection(&self, _channel: &str, _state: Result<(), String>) {}
}
