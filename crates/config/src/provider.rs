//! `[providers.<name>]`: model endpoints.

use crate::Secret;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// Any OpenAI-compatible chat completions server.
    Openai,
    /// Anthropic Messages API.
    Anthropic,
}

impl ProviderKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Openai => "openai",
            Self::Anthropic => "anthropic",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    pub kind: ProviderKind,
    #[serde(default)]
    pub base_url: Option<String>,
    #[serde(default)]
    pub api_key: Option<Secret>,
    pub model: String,
    #[serde(default)]
    pub temperature: Option<f64>,
    /// Ordered fallback chain: provider names tried after this one fails.
    #[serde(default)]
    pub fallbacks: Vec<String>,
    /// Seconds one request may take before it counts as failed.
    #[serde(default = "default_timeout")]
    pub timeout_secs: u64,
    /// Retries of the same provider on 429/5xx before falling back.
    #[serde(default = "default_retries")]
    pub max_retries: u32,
    /// Tokens the model's context holds. Unset: asked from the server
    /// where it says (llama.cpp's `/props`), or learned from its first
    /// "context exceeded" answer.
    #[serde(default)]
    pub context_window: Option<u32>,
    /// Tokens an answer may take (kept free when the history is fitted to
    /// the context; Anthropic's `max_tokens`).
    #[serde(default = "default_max_tokens")]
    pub max_tokens: u32,
}

fn default_max_tokens() -> u32 {
    4096
}

fn default_timeout() -> u64 {
    120
}
fn default_retries() -> u32 {
    2
}

impl ProviderConfig {
    /// The base URL, or the public endpoint of the provider kind.
    pub fn base_url(&self) -> &str {
        match (&self.base_url, self.kind) {
            (Some(u), _) => u.trim_end_matches('/'),
            (None, ProviderKind::Openai) => "https://api.openai.com/v1",
            (None, ProviderKind::Anthropic) => "https://api.anthropic.com",
        }
    }
}
