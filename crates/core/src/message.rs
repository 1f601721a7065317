//! Messages crossing the boundary between a channel and the gateway.

use crate::{ApprovalChoice, Attachment, ChatAddress, UserId};
use serde::{Deserialize, Serialize};

/// A message a person wrote, as the adapter saw it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Inbound {
    /// Where it was written.
    pub address: ChatAddress,
    /// Who wrote it, as the platform authenticated them.
    pub sender: UserId,
    /// Human-readable sender name, for prompts and logs.
    pub sender_name: String,
    /// The text, with a mention of the bot cut out.
    pub text: String,
    /// Platform id of this message (for replies and threads).
    pub message_id: Option<String>,
    /// The platform's own id of this event when it is not `message_id`
    /// (a Matrix reaction answers the prompt it reacts to, but is an event
    /// of its own): with the chat, what tells a redelivery from a new
    /// message.
    #[serde(default)]
    pub event_id: Option<String>,
    /// The bot was mentioned or replied to.
    pub mentioned: bool,
    /// A one-to-one conversation (DM); always answered.
    pub direct: bool,
    /// The message this one replies to, if any.
    pub reply_to: Option<String>,
    /// The guild (Discord server) the chat belongs to, where the platform
    /// has them: routes may match on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guild: Option<String>,
    /// Files sent with it (the text is then their caption, maybe empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<Attachment>,
    /// What the person did: wrote `text`, answered an approval prompt, or
    /// picked a command from the platform's menu.
    #[serde(default, skip_serializing_if = "Action::is_text")]
    pub action: Action,
}

impl Inbound {
    /// `text` from `sender` in `address`, nothing else known yet (no
    /// platform id, not a mention, not direct, no files): adapters set the
    /// rest with struct update syntax.
    pub fn new(address: ChatAddress, sender: UserId, text: impl Into<String>) -> Self {
        Self {
            address,
            sender_name: sender.as_str().to_string(),
            sender,
            text: text.into(),
            message_id: None,
            event_id: None,
            mentioned: false,
            direct: false,
            reply_to: None,
            guild: None,
            attachments: Vec::new(),
            action: Action::Text,
        }
    }
}

/// What a person did, as the platform told the adapter. A typed `/command`
/// is text (the gateway reads it with the command catalog); adapters never
/// write command text for what people did otherwise.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Action {
    /// Wrote the message's text.
    #[default]
    Text,
    /// Answered an approval prompt (a button, a reaction, a local press).
    Decide {
        /// The request.
        approval: String,
        /// What they chose.
        choice: ApprovalChoice,
    },
    /// Picked a command of the catalog from the platform's menu (Discord's
    /// application commands): its name and argument values in the order
    /// the catalog defines them (a sub-command's name first).
    Command {
        /// The catalog name.
        name: String,
        /// The values given.
        args: Vec<String>,
    },
}

impl Action {
    /// Whether this is plain text.
    pub fn is_text(&self) -> bool {
        matches!(self, Self::Text)
    }
}

/// Text the gateway wants shown in a chat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outbound {
    /// Where to post it.
    pub address: ChatAddress,
    /// Markdown-ish text; each channel renders it natively.
    pub text: String,
    /// Platform id of the message this one answers, when there is one.
    pub reply_to: Option<String>,
    /// A stable id of this delivery (its outbox key). Platforms whose sends
    /// are idempotent (Matrix transaction ids) use it, so a send repeated
    /// after a crash lands once.
    #[serde(default)]
    pub delivery_key: Option<String>,
}

impl Outbound {
    /// `text` for `address`, answering nothing in particular.
    pub fn new(address: ChatAddress, text: impl Into<String>) -> Self {
        Self {
            address,
            text: text.into(),
            reply_to: None,
            delivery_key: None,
        }
    }
}
