//! `sessions_send`: a message to a child session this session started —
//! seen by a running child at its next step, or a new turn in a finished one.

use crate::policy::{CommandRisk, Effect};
use crate::tools::{Tool, ToolContext, ToolResult, tool_args};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use switchboard_store::RunStatus;

/// `sessions_send`: a message to a child session.
pub struct SessionsSend;

#[derive(Deserialize)]
struct Args {
    #[serde(rename = "sessionKey")]
    session_key: String,
    message: String,
}

#[async_trait]
impl Tool for SessionsSend {
    fn name(&self) -> &'static str {
        "sessions_send"
    }
    fn description(&self) -> String {
        "Send a message to a child session you started: a running child sees it at its next step; a finished one answers in a new turn.".into()
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"sessionKey": {"type": "string"}, "message": {"type": "string"}}, "required": ["sessionKey", "message"]})
    }
    fn effect(&self, _args: &Value) -> Effect {
        Effect::Write(CommandRisk::Low)
    }
    async fn execute(&self, args: Value, ctx: &ToolContext) -> ToolResult {
        let args: Args = tool_args!(self, args);
        let core = &ctx.core;
        let row = match ctx.store.runs_of_session(&ctx.session_key, 200).await {
            Ok(rows) => rows.into_iter().find(|r| r.session_key == args.session_key),
            Err(e) => return ToolResult::fail(format!("the session registry could not be read ({e})")),
        };
        let Some(row) = row else {
            return ToolResult::fail(format!("No child session '{}' of this session", args.session_key));
        };
        let note = format!(
            "Message from the session that started you ({}): {}",
            ctx.agent, args.message
        );
        if row.status == RunStatus::Running {
            core.live.post_to_inbox(&row.session_key, note);
            return ToolResult::ok(format!(
                "delivered to {} (running); it sees the message at its next step",
                row.session_key
            ));
        }
        ToolResult::fail(format!(
            "{} has ended ({}); start new work with sessions_spawn",
            row.session_key, row.status
        ))
    }
}
