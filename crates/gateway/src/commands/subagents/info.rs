//! `/subagents info <id|#>`: everything the registry knows about one child.

use super::{CommandContext, resolve, runtime_of, tokens_of};
use crate::human_time;

pub(super) async fn apply(ctx: &CommandContext<'_>, target: &str) -> String {
    let r = match resolve(ctx, target).await {
        Ok(r) => r,
        Err(e) => return e,
    };
    let progress = r
        .progress
        .as_deref()
        .and_then(|p| serde_json::from_str::<serde_json::Value>(p).ok())
        .map(|p| {
            format!(
                "iterations {}, tools completed {}, last tool {}",
                p["iterations"],
                p["tools_completed"],
                p["last_tool"]["name"].as_str().unwrap_or("-")
            )
        })
        .unwrap_or_else(|| "(none recorded)".into());
    let now = ctx.runtime.store().now_ms();
    let outcome = match (&r.output, &r.error) {
        (_, Some(e)) => format!("error: {e}"),
        (Some(o), None) => format!("output: {}", o.chars().take(300).collect::<String>()),
        (None, None) => "-".into(),
    };
    [
        format!("status: {}", r.status),
        format!("label: {}", r.label.as_deref().unwrap_or("-")),
        format!("agent: {} ({})", r.agent, r.kind),
        format!("task: {}", r.task.as_deref().unwrap_or("-")),
        format!("run id: {}", r.id),
        format!("session key: {}", r.session_key),
        format!("session id: {}", r.id),
        format!("transcript: /subagents log {target} (add tools for tool calls)"),
        format!("depth: {}", r.depth),
        format!(
            "gateway instance: {}",
            r.instance_id.as_deref().map_or("-", |i| &i[..8.min(i.len())])
        ),
        format!("parent: {}", r.parent_id.as_deref().unwrap_or("-")),
        format!("created: {}", human_time::at(r.created_at, now)),
        format!(
            "started: {}",
            r.started_at.map_or_else(|| "-".into(), |t| human_time::at(t, now))
        ),
        format!(
            "ended: {}",
            r.ended_at.map_or_else(|| "-".into(), |t| human_time::at(t, now))
        ),
        format!("runtime: {}", runtime_of(&r)),
        format!("tokens: {}", tokens_of(&r)),
        format!("cost: ${:.4}", r.cost_micros as f64 / 1e6),
        format!("model: {}", r.model.as_deref().unwrap_or("-")),
        format!("outcome: {outcome}"),
        format!("progress: {progress}"),
    ]
    .join("\n")
}
