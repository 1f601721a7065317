//! Status reactions: how far the handling of a person's message got, shown
//! as a reaction on that message (docs/conversations.md).

use crate::ChatAddress;

/// How far the handling of a person's message got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MessageStatus {
    /// The gateway took it; its turn has not started.
    Taken,
    /// Its turn is running.
    Working,
    /// Answered.
    Done,
    /// Its turn failed or was stopped.
    Failed,
}

impl MessageStatus {
    /// The reaction shown for it where any emoji may be used.
    pub fn emoji(self) -> &'static str {
        match self {
            Self::Taken => "👀",
            Self::Working => "🤔",
            Self::Done => "✅",
            Self::Failed => "❌",
        }
    }

    /// `Done` when `ok`, else `Failed`.
    pub fn ended(ok: bool) -> Self {
        if ok { Self::Done } else { Self::Failed }
    }

    /// Whether nothing follows it.
    pub fn is_final(self) -> bool {
        matches!(self, Self::Done | Self::Failed)
    }
}

/// A person's message whose status reaction changes.
#[derive(Debug, Clone, Copy)]
pub struct StatusMark<'a> {
    /// Where the message is.
    pub address: &'a ChatAddress,
    /// The platform's id of the message.
    pub message_id: &'a str,
    /// The reaction shown now, which the new one replaces.
    pub previous: Option<MessageStatus>,
    /// The reaction to show.
    pub status: MessageStatus,
}
