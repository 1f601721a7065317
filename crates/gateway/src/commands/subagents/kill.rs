//! `/subagents kill <id|#|all>`: stop now — in-flight model and tool calls
//! included — cascading to the child's own children. Killing someone
//! else's run needs an approver.

use super::{CommandContext, children, resolve};
use switchboard_store::RunRow;
use switchboard_store::RunStatus;

pub(super) async fn apply(ctx: &CommandContext<'_>, target: &str) -> String {
    let roots: Vec<RunRow> = if target == "all" {
        match children(ctx).await {
            Ok(rows) => rows.into_iter().filter(|r| r.status == RunStatus::Running).collect(),
            Err(e) => return e,
        }
    } else {
        match resolve(ctx, target).await {
            Ok(r) => vec![r],
            Err(e) => return e,
        }
    };
    let sender = ctx.sender.to_string();
    let config = &ctx.runtime.config();
    if let Some(r) = roots
        .iter()
        .find(|r| !crate::rights::may_kill(config, ctx.sender, &crate::rights::RunOwner::of(r)))
    {
        return format!(
            "{sender} may not kill run {}: it was started by {}, and only an approver of its agent may stop someone else's runs.",
            &r.id[..8.min(r.id.len())],
            r.requester.as_deref().unwrap_or("someone else")
        );
    }
    let killed = ctx
        .runtime
        .core()
        .kill_tree(roots, &format!("killed by {sender}"))
        .await;
    if killed.is_empty() {
        "Nothing to kill: no matching run is still running.".into()
    } else {
        format!("Killed {} run(s): {}.", killed.len(), killed.join(", "))
    }
}
