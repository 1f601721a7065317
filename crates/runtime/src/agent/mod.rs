//! One agent run: the tool loop over a provider chain with a tool registry,
//! a policy, an approval broker and a transcript.

mod compact;
pub(crate) mod history;
mod joins;
mod last_word;
mod tool_call;
mod turn;

pub use joins::{Join, Joins};
pub use turn::AgentRun;

use crate::message::Usage;
use crate::provider::{ProviderError, Served};
use switchboard_store::StoreError;

/// Progress a caller may show while a turn runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnEvent {
    /// A tool call started.
    ToolStarted {
        /// The tool.
        name: String,
        /// Its arguments, redacted.
        summary: String,
    },
    /// A tool call ended.
    ToolFinished {
        /// The tool.
        name: String,
        /// Whether it succeeded.
        success: bool,
    },
    /// More of the model's answer, as it streams in.
    Text(String),
    /// Forget the text streamed so far: the model went on to call tools,
    /// or another provider answers instead of one that failed.
    TextReset,
}

/// A finished turn.
#[derive(Debug, Clone)]
pub struct TurnReply {
    /// The answer.
    pub text: String,
    /// Tokens over all model calls of the turn.
    pub usage: Usage,
    /// The provider that served the last model call.
    pub served: Option<Served>,
    /// Model calls made that asked for tools.
    pub iterations: u32,
    /// Tool calls that succeeded.
    pub tools_completed: u32,
}

/// Why a turn ended without an answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TurnError {
    /// No such agent.
    #[error("unknown agent '{0}'")]
    UnknownAgent(String),
    /// The agent is disabled.
    #[error("agent '{0}' is disabled ([agents.{0}].enabled = false)")]
    DisabledAgent(String),
    /// Every provider of the chain failed.
    #[error(transparent)]
    Provider(#[from] ProviderError),
    /// A spend limit is reached.
    #[error("{0}")]
    Budget(String),
    /// Stopped (`/stop`, a kill, a parent ending).
    #[error("the turn was cancelled")]
    Cancelled,
    /// Ran out of time (seconds).
    #[error("timed out after {0}s")]
    Timeout(u64),
    /// The execution tree budget is spent.
    #[error("the execution tree budget is spent (max_execution_tree_iterations = {0})")]
    TreeBudget(u32),
    /// The control plane failed.
    #[error("storage error: {0}")]
    Store(#[from] StoreError),
    /// A summary could not be written (`/compact`).
    #[error("{0}")]
    Compaction(#[from] crate::compaction::CompactError),
}
