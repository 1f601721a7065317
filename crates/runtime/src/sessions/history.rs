//! `sessions_history`: the transcript of a child session this session started.

use crate::tools::{ToolContext, ToolResult, builtin_tool};
use serde::Deserialize;
use serde_json::{Value, json};

/// `sessions_history`: a child session's transcript.
pub struct SessionsHistory;

#[derive(Deserialize)]
struct Args {
    #[serde(rename = "sessionKey")]
    session_key: String,
    #[serde(default)]
    limit: Option<i64>,
}

builtin_tool!(SessionsHistory, "sessions_history", Args);

impl SessionsHistory {
    async fn run(&self, args: Args, ctx: &ToolContext) -> ToolResult {
        let mine = match ctx.store.runs().of_session(&ctx.session_key, 200).await {
            Ok(rows) => rows.iter().any(|r| r.session_key == args.session_key),
            Err(_) => false,
        };
        if !mine {
            return ToolResult::fail(format!("No child session '{}' of this session", args.session_key));
        }
        let limit = args.limit.unwrap_or(20).clamp(1, 200);
        match ctx.store.sessions().history(&args.session_key, limit).await {
            Ok(rows) => {
                let messages: Vec<Value> = rows.iter().filter_map(|r| serde_json::from_str(&r.body).ok()).collect();
                ToolResult::ok(json!({ "messages": messages }).to_string())
            }
            Err(e) => {
                tracing::error!(error = %e, "sessions_history failed");
                ToolResult::fail("the transcript could not be read (storage error)")
            }
        }
    }
}
