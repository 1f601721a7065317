//! Model providers: OpenAI-compatible chat completions and Anthropic
//! Messages, behind one trait, plus the fallback chain ("Reliable").
//!
//! Errors here are written for users and models to read: they never carry
//! endpoints, keys or response bodies. Details go to the logs only.

mod anthropic;
mod chain;
mod fit;
mod health;
mod holdback;
mod http;
mod openai;
mod openai_chunk;
mod schema_fit;
mod set;
mod stream;
pub(crate) mod text_calls;

pub use chain::{ProviderChain, Served};
pub use fit::{ContextLimits, estimate, estimate_tools};
pub use health::{ProviderHealth, provider_health};
pub use set::ProviderSet;
pub use stream::{Delta, Deltas};

use crate::message::ToolCall;
use crate::message::{ChatMessage, ToolSpec, Usage};
use async_trait::async_trait;
use std::sync::Arc;
use switchboard_config::{ProviderConfig, ProviderKind};

/// One request to a model. It borrows the conversation and the shared
/// tool specs: providers serialize straight from them, without copies.
#[derive(Debug, Clone, Copy)]
pub struct ChatRequest<'a> {
    /// The conversation.
    pub messages: &'a [ChatMessage],
    /// The tools offered (empty: none).
    pub tools: &'a [Arc<ToolSpec>],
    /// Overrides the provider's configured temperature.
    pub temperature: Option<f64>,
    /// Stream the answer, handing text here as it arrives (`None`: one
    /// plain answer).
    pub deltas: Option<Deltas<'a>>,
    /// A lower cap on the answer's length than the provider's own (a
    /// compaction summary's share of the window).
    pub max_tokens: Option<u32>,
}

impl<'a> ChatRequest<'a> {
    /// `messages` alone: no tools, the configured temperature, one plain
    /// answer.
    pub fn of(messages: &'a [ChatMessage]) -> Self {
        Self {
            messages,
            tools: &[],
            temperature: None,
            deltas: None,
            max_tokens: None,
        }
    }
}

/// A model's answer: text, tool calls, or both.
#[derive(Debug, Clone, Default)]
pub struct ChatResponse {
    /// The answer's text.
    pub text: String,
    /// Calls it asks for.
    pub tool_calls: Vec<ToolCall>,
    /// Tokens used.
    pub usage: Usage,
    /// The model stopped at its output limit: the text is cut off, and a
    /// tool call's arguments may be incomplete.
    pub truncated: bool,
}

/// Why a model call failed (never with endpoints, keys or bodies).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    /// The server could not be reached.
    #[error("model provider '{0}' could not be reached (is the model server running? check [providers.{0}].base_url)")]
    Unreachable(String),
    /// It did not answer in time.
    #[error("model provider '{0}' did not answer in time")]
    Timeout(String),
    /// It refused the key.
    #[error("model provider '{0}' rejected the credentials (check [providers.{0}].api_key)")]
    Auth(String),
    /// It asked to slow down.
    #[error("model provider '{0}' is rate limiting requests")]
    RateLimited(String),
    /// Another HTTP error.
    #[error("model provider '{0}' failed with HTTP {1}")]
    Http(String, u16),
    /// The prompt did not fit the model's context; with the context size
    /// when the server said it.
    #[error("this conversation is too long for the model of provider '{0}'; send /new to start afresh")]
    ContextOverflow(String, Option<u32>),
    /// Its answer could not be read.
    #[error("model provider '{0}' sent a response that could not be understood")]
    InvalidResponse(String),
    /// The provider is configured wrongly (name, what).
    #[error("model provider '{0}' is not usable: {1}")]
    Misconfigured(String, String),
    /// Every provider of the chain failed.
    #[error("all model providers failed: {0}")]
    AllFailed(String),
}

impl ProviderError {
    /// Whether retrying the same provider may help.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            Self::Unreachable(_) | Self::Timeout(_) | Self::RateLimited(_) | Self::Http(_, 500..=599)
        )
    }
}

/// One configured model endpoint.
#[async_trait]
pub trait Provider: Send + Sync {
    /// The configured provider name (`local`).
    fn name(&self) -> &str;
    /// The API it speaks.
    fn kind(&self) -> ProviderKind;
    /// The model it asks for.
    fn model(&self) -> &str;
    /// One call, retried on transient failures per the provider's settings.
    async fn chat(&self, request: &ChatRequest<'_>) -> Result<ChatResponse, ProviderError>;
    /// What is known of the model's context (for fitting the history).
    fn limits(&self) -> &ContextLimits;
    /// Ask the server for its context size, once, where it says.
    async fn learn_window(&self) {}
}

/// Build the provider for one configuration entry.
pub fn build_provider(name: &str, config: &ProviderConfig) -> Result<Arc<dyn Provider>, ProviderError> {
    let http = http::HttpSettings::from_config(name, config)?;
    Ok(match config.kind {
        ProviderKind::Openai => Arc::new(openai::OpenAiProvider::new(http)?),
        ProviderKind::Anthropic => Arc::new(anthropic::AnthropicProvider::new(http)?),
    })
}
