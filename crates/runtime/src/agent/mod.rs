//! One agent run: the tool loop over a provider chain with a tool registry,
//! a policy, an approval broker and a transcript.

pub(crate) mod history;
mod tool_call;
mod turn;

pub use turn::AgentRun;

use crate::message::Usage;
use crate::provider::{ProviderError, Served};
use switchboard_store::StoreError;

/// Progress a caller may show while a turn runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnEvent {
    ToolStarted { name: String, summary: String },
    ToolFinished { name: String, success: bool },
}

/// A finished turn.
#[derive(Debug, Clone)]
pub struct TurnReply {
    pub text: String,
    pub usage: Usage,
    /// The provider that served the last model call.
    pub served: Option<Served>,
    /// Model calls made that asked for tools.
    pub iterations: u32,
    pub tools_completed: u32,
}

#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    #[error("unknown agent '{0}'")]
    UnknownAgent(String),
    #[error("agent '{0}' is disabled ([agents.{0}].enabled = false)")]
    DisabledAgent(String),
    #[error(transparent)]
    Provider(#[from] ProviderError),
    #[error("{0}")]
    Budget(String),
    #[error("the turn was cancelled")]
    Cancelled,
    #[error("timed out after {0}s")]
    Timeout(u64),
    #[error("the execution tree budget is spent (max_execution_tree_iterations = {0})")]
    TreeBudget(u32),
    #[error("storage error: {0}")]
    Store(#[from] StoreError),
}
