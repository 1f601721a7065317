//! `[transcription]`: voice messages turned into text before their turn,
//! by an OpenAI-compatible `/audio/transcriptions` endpoint (OpenAI, Groq,
//! a local whisper.cpp or faster-whisper server; docs/conversations.md).

use crate::Secret;
use serde::{Deserialize, Serialize};

/// `[transcription]`: absent means voice messages are saved and described,
/// not transcribed.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TranscriptionConfig {
    /// The API root, e.g. `https://api.openai.com/v1` or
    /// `http://127.0.0.1:8080/v1` (required).
    pub base_url: String,
    /// The model sent with each request (default `whisper-1`).
    #[serde(default = "default_model")]
    pub model: String,
    /// Bearer token (default none: local servers).
    #[serde(default)]
    pub api_key: Option<Secret>,
    /// The spoken language as an ISO-639-1 code, when known (helps
    /// accuracy; default: the server detects it).
    #[serde(default)]
    pub language: Option<String>,
    /// Larger voice messages are not transcribed (bytes; default 25 MiB,
    /// OpenAI's limit).
    #[serde(default = "default_max_bytes")]
    pub max_bytes: u64,
    /// Longer voice messages are not transcribed (seconds; default 600).
    #[serde(default = "default_max_seconds")]
    pub max_seconds: u64,
    /// How long one transcription may take (seconds; default 60).
    #[serde(default = "default_timeout")]
    pub timeout_secs: u64,
    /// Show the person what was understood when it is short (default true).
    #[serde(default = "crate::agent::yes")]
    pub show_transcript: bool,
}

fn default_model() -> String {
    "whisper-1".into()
}

fn default_max_bytes() -> u64 {
    25 * 1024 * 1024
}

fn default_max_seconds() -> u64 {
    600
}

fn default_timeout() -> u64 {
    60
}
