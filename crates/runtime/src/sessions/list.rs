//! `sessions_list`: the child sessions this session started.

use crate::tools::{ToolContext, ToolResult, builtin_tool};
use serde_json::json;

/// `sessions_list`: this session's child sessions.
pub struct SessionsList;

builtin_tool!(SessionsList, "sessions_list");

impl SessionsList {
    async fn run(&self, _: serde::de::IgnoredAny, ctx: &ToolContext) -> ToolResult {
        match ctx.store.runs().of_session(&ctx.session_key, 50).await {
            Ok(rows) => ToolResult::ok(
                json!({"sessions": rows.iter().map(|r| json!({
                    "runId": r.id, "childSessionKey": r.session_key, "agentId": r.agent,
                    "label": r.label, "status": r.status, "task": r.task,
                })).collect::<Vec<_>>()})
                .to_string(),
            ),
            Err(e) => {
                tracing::error!(error = %e, "sessions_list failed");
                ToolResult::fail("the session registry could not be read (storage error)")
            }
        }
    }
}
