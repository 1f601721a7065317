//! `sessions_send`: a message to a child session this session started —
//! seen by a running child at its next step, or a new turn in a finished one.

use crate::tools::{ToolContext, ToolResult, builtin_tool};
use serde::Deserialize;
use switchboard_store::RunStatus;

/// `sessions_send`: a message to a child session.
pub struct SessionsSend;

#[derive(Deserialize)]
struct Args {
    #[serde(rename = "sessionKey")]
    session_key: String,
    message: String,
}

builtin_tool!(SessionsSend, "sessions_send", Args);

impl SessionsSend {
    async fn run(&self, args: Args, ctx: &ToolContext) -> ToolResult {
        let row = match ctx.store.runs().of_session(&ctx.session_key, 200).await {
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
            ctx.host.leave_note(&row.session_key, note);
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
