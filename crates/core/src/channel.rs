//! The `Channel` trait every adapter implements.

use crate::{ApprovalPrompt, Attachment, FetchError, Intake, Outbound, OutboundFile, PromptState};
use async_trait::async_trait;
use std::sync::Arc;

/// A platform's handle on a message the adapter posted (for edits).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageRef {
    /// The chat the message is in.
    pub chat: String,
    /// The platform's id of the message.
    pub id: String,
}

#[derive(Debug, thiserror::Error)]
/// Why a channel operation failed, and so whether to retry it.
pub enum ChannelError {
    /// The platform asked us to wait; the caller should retry after this long.
    #[error("rate limited, retry after {0} s")]
    RateLimited(u64),
    /// A transient failure (network, 5xx): retry with backoff.
    #[error("transient channel failure: {0}")]
    Transient(String),
    /// A permanent failure: retrying will not help.
    #[error("channel refused the request: {0}")]
    Permanent(String),
    /// The channel does not support this operation.
    #[error("not supported by this channel: {0}")]
    Unsupported(&'static str),
}

/// Why an adapter cannot be built: a setting it cannot work with (each
/// names the key under the channel's table, `channels.<kind>.<alias>.<key>`),
/// or its HTTP client.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SetupError {
    /// The key holds nothing.
    #[error("{key} is empty")]
    Empty {
        /// The setting.
        key: &'static str,
    },
    /// The key must be an `http://` or `https://` URL.
    #[error("{key} '{value}' is not an http(s) URL")]
    NotHttp {
        /// The setting.
        key: &'static str,
        /// What it holds.
        value: String,
    },
    /// The platform does not accept the value.
    #[error("{key} '{value}': {why}")]
    Invalid {
        /// The setting.
        key: &'static str,
        /// What it holds.
        value: String,
        /// What the platform's library said.
        why: String,
    },
    /// The HTTP client could not be built (TLS roots, proxy settings).
    #[error("cannot build the HTTP client: {0}")]
    HttpClient(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// A posted approval prompt to edit, and how its request ended.
#[derive(Debug, Clone, Copy)]
pub struct PromptEdit<'a> {
    /// The prompt message.
    pub message: &'a MessageRef,
    /// What it asked.
    pub prompt: &'a ApprovalPrompt,
    /// How it ended.
    pub state: &'a PromptState,
}

impl PromptEdit<'_> {
    /// The prompt's text followed by its outcome, as plain text.
    pub fn text(&self) -> String {
        format!("{}\n{}", self.prompt.render_text(), self.state.describe())
    }
}

/// One running chat platform connection (`telegram.main`, `cli`, ...).
#[async_trait]
pub trait Channel: Send + Sync {
    /// The instance name, `<kind>.<alias>` or `cli`.
    fn name(&self) -> &str;

    /// Start receiving; what people send is handed to `intake` (see
    /// [`Intake`]: the channel's cursor moves only with what was taken).
    async fn start(&self, intake: Arc<dyn Intake>) -> Result<(), ChannelError>;

    /// Stop receiving (this instance gave the channel up: its lease moved
    /// to another gateway). Sending may still be asked of it. The default
    /// does nothing: channels that are not leased never stop.
    async fn stop(&self) {}

    /// Ask the platform who the configured credentials belong to (the
    /// bot's account name), without starting to receive: `switchboard
    /// doctor`'s credential check. `None`: nothing to check (a local
    /// channel, or credentials only tried when the channel starts).
    async fn whoami(&self) -> Result<Option<String>, ChannelError> {
        Ok(None)
    }

    /// Send text into a chat and thread, split at the platform's limit.
    async fn send(&self, message: &Outbound) -> Result<Vec<MessageRef>, ChannelError>;

    /// Show that a reply is being prepared.
    async fn typing(&self, _address: &crate::ChatAddress) -> Result<(), ChannelError> {
        Ok(())
    }

    /// Show a person's message's status as a reaction on it, replacing
    /// the previous one (see `MessageStatus`).
    async fn set_status(&self, _mark: &crate::StatusMark<'_>) -> Result<(), ChannelError> {
        Err(ChannelError::Unsupported("status reactions"))
    }

    /// Post an approval prompt into `address`, with native choices when the
    /// platform has them and the text fallback otherwise.
    async fn send_approval_prompt(
        &self,
        address: &crate::ChatAddress,
        prompt: &ApprovalPrompt,
    ) -> Result<MessageRef, ChannelError>;

    /// Edit a posted prompt to show how it ended.
    async fn update_approval_prompt(&self, edit: &PromptEdit<'_>) -> Result<(), ChannelError>;

    /// Whether, and within what limits, an answer may be shown here while
    /// it is written (one message edited as it grows). `None`: not here.
    fn streaming(&self) -> Option<StreamLimits> {
        None
    }

    /// Replace the text of `message`, which this channel sent (a streamed
    /// answer growing, or its final form).
    async fn edit_message(&self, _message: &MessageRef, _text: &str) -> Result<(), ChannelError> {
        Err(ChannelError::Unsupported("editing messages"))
    }

    /// Show `text` as draft `draft_id` in a direct chat: a preview the
    /// platform animates, which posts nothing (the finished answer is then
    /// sent as an ordinary message). Only where `streaming()` says `drafts`.
    async fn draft(&self, _address: &crate::ChatAddress, _draft_id: u64, _text: &str) -> Result<(), ChannelError> {
        Err(ChannelError::Unsupported("message drafts"))
    }

    /// Download a file this channel attached to an inbound message,
    /// reading no more than `limit` bytes (the download stops there).
    async fn fetch_attachment(&self, _attachment: &Attachment, _limit: u64) -> Result<Vec<u8>, FetchError> {
        Err(FetchError::Failed("this channel does not receive files".into()))
    }

    /// The largest file this channel can post, or `None` when it cannot
    /// post files at all.
    async fn upload_limit(&self) -> Option<u64> {
        None
    }

    /// Post a file (with its caption) into a chat and thread. The caller
    /// checked it against `upload_limit`.
    async fn send_file(&self, _file: &OutboundFile) -> Result<MessageRef, ChannelError> {
        Err(ChannelError::Unsupported("sending files"))
    }
}

/// How a channel shows a streamed answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamLimits {
    /// The longest text one streamed message carries; the rest continues
    /// in a new message.
    pub max_len: usize,
    /// The least time between two edits in one chat (the platform's flood
    /// limit); a rate limit answer makes the gateway wait longer still.
    pub min_interval: std::time::Duration,
    /// In direct chats the answer is shown as a draft (`Channel::draft`)
    /// rather than a message edited; a refused draft falls back to edits.
    pub drafts: bool,
}
