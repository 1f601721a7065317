//! `[limits]`: bounds on chat input, so one person (or a flood of
//! messages) cannot exhaust the gateway.

use serde::{Deserialize, Serialize};

/// `[limits]`: bounds on chat input.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(default)]
pub struct LimitsConfig {
    /// Messages one conversation may have waiting behind its running turn;
    /// more get a "busy, try again" answer.
    pub session_queue: u32,
    /// Messages one person may send per minute, across chats (0 = no limit).
    pub messages_per_minute: u32,
    /// A conversation idle this long is dropped from memory (its history
    /// stays in the control plane and is read back on the next message);
    /// 0, the default, drops it as soon as its last queued turn ends.
    pub idle_session_secs: u64,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        Self {
            session_queue: 10,
            messages_per_minute: 30,
            idle_session_secs: 0,
        }
    }
}

/// `[storage]`: how long the control plane keeps what it no longer needs.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(default)]
pub struct StorageConfig {
    /// Answered inbound messages are kept this long (they let a platform's
    /// redelivery of a message be recognised), then deleted.
    pub inbox_retention_hours: u64,
}

impl Default for StorageConfig {
    fn default() -> Self {
        Self {
            inbox_retention_hours: 24,
        }
    }
}

/// `[attachments]`: files people send with their messages.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(default)]
pub struct AttachmentsConfig {
    /// The largest file taken from a chat (bytes); a larger one is not
    /// downloaded, and the person and the model are told.
    pub max_bytes: u64,
}

impl Default for AttachmentsConfig {
    fn default() -> Self {
        Self {
            max_bytes: 20 * 1024 * 1024,
        }
    }
}
