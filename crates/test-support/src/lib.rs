//! Loopback test peers. [`ScriptedModel`] is an OpenAI-compatible (and
//! Anthropic Messages) HTTP server that answers from a script, so tests
//! drive the real agent loop over real HTTP, deterministically. The
//! platform fakes (`telegram`, `discord`) and Synapse stand in for chat
//! servers.

pub mod browser;
pub mod config;
pub mod discord;
pub mod multipart;
pub mod pg_server;
pub mod relay;
mod scripted_model;
pub mod synapse;
pub mod telegram;
mod transcriber;

pub use scripted_model::{Reply, ScriptedModel, Step, last_message_text, offered_tools, tokens_of, tool_results};
pub use transcriber::{Heard, Transcriber};

/// `n` numbered words, `prefix1 prefix2 …`, for answers that stream.
pub fn words(prefix: &str, n: usize) -> String {
    (1..=n).map(|i| format!("{prefix}{i}")).collect::<Vec<_>>().join(" ")
}
