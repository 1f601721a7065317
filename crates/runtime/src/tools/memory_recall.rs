//! `memory_recall`: search the memory this agent may read (its own rows and
//! those of `workspace.read_memory_from`).

use super::{Tool, ToolContext, ToolResult, tool_args};
use crate::policy::Effect;
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

pub(crate) struct MemoryRecall;

#[derive(Deserialize)]
struct Args {
    #[serde(default)]
    query: String,
    #[serde(default)]
    limit: Option<i64>,
}

#[async_trait]
impl Tool for MemoryRecall {
    fn name(&self) -> &'static str {
        "memory_recall"
    }
    fn description(&self) -> String {
        "Search long-term memory by words in the key or content (empty query lists recent facts).".into()
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer", "minimum": 1, "maximum": 50}}})
    }
    fn effect(&self, _args: &Value) -> Effect {
        Effect::Read
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> ToolResult {
        let args: Args = tool_args!(self, args);
        let limit = args.limit.unwrap_or(10).clamp(1, 50);
        match ctx.store.memory_recall(&ctx.memory_readers, &args.query, limit).await {
            Ok(rows) if rows.is_empty() => ToolResult::ok("no matching memories"),
            Ok(rows) => ToolResult::ok(
                rows.iter()
                    .map(|r| format!("- [{}] {}: {}", r.agent, r.key, r.content))
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            Err(e) => {
                tracing::error!(error = %e, "memory_recall failed");
                ToolResult::fail("memory could not be read (storage error)")
            }
        }
    }
}
