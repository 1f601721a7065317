//! `memory_store`: remember a fact under a key, attributed to the agent.

use super::{Tool, ToolContext, ToolResult, tool_args};
use crate::policy::{CommandRisk, Effect};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

pub(crate) struct MemoryStore;

#[derive(Deserialize)]
struct Args {
    key: String,
    content: String,
}

#[async_trait]
impl Tool for MemoryStore {
    fn name(&self) -> &'static str {
        "memory_store"
    }
    fn description(&self) -> String {
        "Store a fact in long-term memory under a short key (replaces an existing key).".into()
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"key": {"type": "string"}, "content": {"type": "string"}}, "required": ["key", "content"]})
    }
    fn effect(&self, _args: &Value) -> Effect {
        Effect::Write(CommandRisk::Low)
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> ToolResult {
        let args: Args = tool_args!(self, args);
        if args.key.trim().is_empty() {
            return ToolResult::fail("'key' must not be empty");
        }
        match ctx.store.memory_store(&ctx.agent, args.key.trim(), &args.content).await {
            Ok(()) => ToolResult::ok(format!("stored memory '{}'", args.key.trim())),
            Err(e) => {
                tracing::error!(error = %e, "memory_store failed");
                ToolResult::fail("memory could not be saved (storage error)")
            }
        }
    }
}
