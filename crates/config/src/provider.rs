//! `[providers.<name>]`: model endpoints.

use crate::Secret;
use serde::{Deserialize, Serialize};

/// The API a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// Any OpenAI-compatible chat completions server.
    Openai,
    /// Anthropic Messages API.
    Anthropic,
}

impl ProviderKind {
    /// The configuration word.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Openai => "openai",
            Self::Anthropic => "anthropic",
        }
    }
}

/// `[providers.<name>]`: one model server.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// `openai` (any OpenAI-compatible chat completions server: OpenAI, llama.cpp, vLLM, Ollama...) or `anthropic` (required).
    pub kind: ProviderKind,
    /// Where the server is (default the kind's public endpoint).
    #[serde(default)]
    pub base_url: Option<String>,
    /// Secret sent as the bearer token (`x-api-key` for Anthropic, default none).
    #[serde(default)]
    pub api_key: Option<Secret>,
    /// The model name sent with each request (required).
    pub model: String,
    /// Sampling temperature (default the server's).
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
    /// Whether a tool call the model wrote into its text (fenced JSON,
    /// `<tool_call>` tags and the like) is taken as a call: `auto` or `off`.
    /// Unset: `auto` for OpenAI-compatible servers on this machine or the
    /// local network, `off` for hosted APIs.
    #[serde(default)]
    pub text_tool_calls: Option<TextToolCalls>,
}

/// `[providers.<p>].text_tool_calls`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TextToolCalls {
    /// Calls written as text in a known shape, naming an offered tool with
    /// arguments that fit it, are taken as calls.
    Auto,
    /// Text is always text.
    Off,
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
    /// Whether calls written as text are read (see `text_tool_calls`).
    pub fn reads_text_calls(&self) -> bool {
        match self.text_tool_calls {
            Some(TextToolCalls::Auto) => self.kind == ProviderKind::Openai,
            Some(TextToolCalls::Off) => false,
            None => self.kind == ProviderKind::Openai && is_local_server(self.base_url()),
        }
    }

    /// The base URL, or the public endpoint of the provider kind.
    pub fn base_url(&self) -> &str {
        match (&self.base_url, self.kind) {
            (Some(u), _) => u.trim_end_matches('/'),
            (None, ProviderKind::Openai) => "https://api.openai.com/v1",
            (None, ProviderKind::Anthropic) => "https://api.anthropic.com",
        }
    }
}

/// Whether `base_url` points at a self-hosted server rather than a hosted
/// API: an IP address, `localhost` or a name without dots.
pub fn is_local_server(base_url: &str) -> bool {
    let Some((_, rest)) = base_url.split_once("://") else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = match host_port.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host_port.split(':').next().unwrap_or(""),
    };
    if host.is_empty() {
        return false;
    }
    host.parse::<std::net::IpAddr>().is_ok() || host == "localhost" || !host.contains('.')
}
