//! `/subagents log <id|#> [limit] [tools]`: the child's last messages.

use super::{CommandContext, resolve};
use serde_json::Value;

pub(super) async fn apply(ctx: &CommandContext<'_>, target: &str, limit: usize, tools: bool) -> String {
    let r = match resolve(ctx, target).await {
        Ok(r) => r,
        Err(e) => return e,
    };
    let rows = match ctx.runtime.store().sessions().history(&r.session_key, 400).await {
        Ok(rows) => rows,
        Err(e) => {
            tracing::error!(error = %e, "cannot read a transcript");
            return "The transcript could not be read (storage error).".into();
        }
    };
    let mut lines = Vec::new();
    for row in rows {
        let Ok(m) = serde_json::from_str::<Value>(&row.body) else {
            continue;
        };
        let role = m["role"].as_str().unwrap_or("?");
        let content = m["content"].as_str().unwrap_or("");
        let calls = m["tool_calls"].as_array().cloned().unwrap_or_default();
        if role == "tool" && !tools {
            continue;
        }
        if !content.is_empty() {
            lines.push(format!("[{role}] {content}"));
        }
        if tools {
            for c in calls {
                lines.push(format!(
                    "[tool call] {} {}",
                    c["name"].as_str().unwrap_or("?"),
                    c["arguments"].as_str().unwrap_or("")
                ));
            }
        }
    }
    if lines.is_empty() {
        return format!("No messages in {} yet.", r.session_key);
    }
    let skip = lines.len().saturating_sub(limit);
    lines[skip..].join("\n")
}
