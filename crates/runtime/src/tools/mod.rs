//! Built-in tools, one per file, and the registry the agent loop offers.

mod file_read;
mod file_write;
mod memory_recall;
mod memory_store;
mod model_switch;
mod registry;
mod shell;

pub use registry::{BoundTool, ToolRegistry};

use crate::policy::{Effect, SecurityPolicy};
use async_trait::async_trait;
use parking_lot::Mutex;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::sync::Arc;
use switchboard_store::Store;
use tokio_util::sync::CancellationToken;

/// The result of one tool call. Failures are values, never panics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResult {
    pub success: bool,
    pub output: String,
    pub error: Option<String>,
}

impl ToolResult {
    pub fn ok(output: impl Into<String>) -> Self {
        Self {
            success: true,
            output: output.into(),
            error: None,
        }
    }

    pub fn fail(error: impl Into<String>) -> Self {
        Self {
            success: false,
            output: String::new(),
            error: Some(error.into()),
        }
    }

    /// The text the model sees.
    pub fn to_model_text(&self) -> String {
        match (&self.error, self.output.is_empty()) {
            (None, _) => self.output.clone(),
            (Some(e), true) => format!("Error: {e}"),
            (Some(e), false) => format!("Error: {e}\n{}", self.output),
        }
    }
}

/// What a tool may use while it runs.
pub struct ToolContext {
    /// The agent whose identity the run has (memory writes are attributed to it).
    pub agent: String,
    pub session_key: String,
    pub policy: Arc<SecurityPolicy>,
    pub store: Store,
    /// Agents whose memory rows this run may read (its own first).
    pub memory_readers: Vec<String>,
    /// Configured provider names, for `model_switch`.
    pub providers: Vec<String>,
    /// Set by `model_switch`; the loop uses it from the next model call on.
    pub switch_to: Mutex<Option<String>>,
    pub cancel: CancellationToken,
    /// The runtime, for tools that start child runs.
    pub core: Arc<crate::core::Core>,
    /// Where this run sits in its tree.
    pub scope: crate::scope::RunScope,
    /// This run's own registry: the ceiling for bounded children.
    pub ceiling: ToolRegistry,
    /// The provider chain and temperature a same-identity child inherits.
    pub chain: crate::provider::ProviderChain,
    pub temperature: Option<f64>,
}

#[async_trait]
pub trait Tool: Send + Sync {
    fn name(&self) -> &'static str;
    fn description(&self) -> String;
    /// JSON Schema of the arguments object.
    fn parameters(&self) -> Value;
    /// What a call with these (already parsed) arguments would do.
    fn effect(&self, args: &Value) -> Effect;
    async fn execute(&self, args: Value, ctx: &ToolContext) -> ToolResult;
}

/// Parse a tool's arguments, or explain what to send instead.
pub(crate) fn parse_args<T: DeserializeOwned>(tool: &str, args: Value) -> Result<T, ToolResult> {
    serde_json::from_value(args).map_err(|e| {
        ToolResult::fail(format!(
            "invalid arguments for {tool}: {e}; send a JSON object matching the tool's schema"
        ))
    })
}
