//! `memory_recall`: search the memory this agent may read (its own rows and
//! those of `workspace.read_memory_from`).

use super::{ToolContext, ToolResult, builtin_tool};
use serde::Deserialize;

pub(crate) struct MemoryRecall;

#[derive(Deserialize)]
struct Args {
    #[serde(default)]
    query: String,
    #[serde(default)]
    limit: Option<i64>,
}

builtin_tool!(MemoryRecall, "memory_recall", Args);

impl MemoryRecall {
    async fn run(&self, args: Args, ctx: &ToolContext) -> ToolResult {
        let limit = args.limit.unwrap_or(10).clamp(1, 50);
        match ctx.store.memory().recall(&ctx.memory_readers, &args.query, limit).await {
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
