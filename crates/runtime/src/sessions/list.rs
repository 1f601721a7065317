//! `sessions_list`: the child sessions this session started.

use crate::policy::Effect;
use crate::tools::{Tool, ToolContext, ToolResult};
use async_trait::async_trait;
use serde_json::{Value, json};

/// `sessions_list`: this session's child sessions.
pub struct SessionsList;

#[async_trait]
impl Tool for SessionsList {
    fn name(&self) -> &'static str {
        "sessions_list"
    }
    fn description(&self) -> String {
        "List the child sessions started from this session, with status.".into()
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }
    fn effect(&self, _args: &Value) -> Effect {
        Effect::Read
    }
    async fn execute(&self, _args: Value, ctx: &ToolContext) -> ToolResult {
        match ctx.store.runs_of_session(&ctx.session_key, 50).await {
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
