//! `/subagents list`: active and recent (30 min) children of this chat.

use super::{CommandContext, children, runtime_of, tokens_of};

pub(super) async fn apply(ctx: &CommandContext<'_>) -> String {
    let rows = match children(ctx).await {
        Ok(r) => r,
        Err(e) => return e,
    };
    if rows.is_empty() {
        return "No subagents in this chat in the last 30 minutes.".into();
    }
    let mut lines = vec!["Subagents of this chat (active and last 30 min):".to_string()];
    for (i, r) in rows.iter().enumerate() {
        let task: String = r.task.as_deref().unwrap_or("").chars().take(60).collect();
        lines.push(format!(
            "#{} {} • {} • {} • {} • {} • {} • {} • {}",
            i + 1,
            &r.id[..8.min(r.id.len())],
            r.label.as_deref().unwrap_or("-"),
            r.agent,
            r.model.as_deref().unwrap_or("-"),
            runtime_of(r),
            tokens_of(r),
            r.status,
            task.replace('\n', " ")
        ));
    }
    lines.join("\n")
}
