//! `memory_store`: remember a fact under a key, attributed to the agent.

use super::{ToolContext, ToolResult, builtin_tool};
use serde::Deserialize;

pub(crate) struct MemoryStore;

#[derive(Deserialize)]
struct Args {
    key: String,
    content: String,
}

builtin_tool!(MemoryStore, "memory_store", Args);

impl MemoryStore {
    async fn run(&self, args: Args, ctx: &ToolContext) -> ToolResult {
        if args.key.trim().is_empty() {
            return ToolResult::fail("'key' must not be empty");
        }
        match ctx.store.memory().put(&ctx.agent, args.key.trim(), &args.content).await {
            Ok(()) => ToolResult::ok(format!("stored memory '{}'", args.key.trim())),
            Err(e) => {
                tracing::error!(error = %e, "memory_store failed");
                ToolResult::fail("memory could not be saved (storage error)")
            }
        }
    }
}
