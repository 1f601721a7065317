//! `/subagents kill <id|#|all>`: stop now — in-flight model and tool calls
//! included — cascading to the child's own children. Killing someone
//! else's run needs an approver.

use super::{CommandContext, children, resolve};
use switchboard_store::{RunEnd, RunRow, RunStatus};

pub async fn apply(ctx: &CommandContext<'_>, target: &str) -> String {
    let roots: Vec<RunRow> = if target == "all" {
        match children(ctx).await {
            Ok(rows) => rows.into_iter().filter(|r| r.status == "running").collect(),
            Err(e) => return e,
        }
    } else {
        match resolve(ctx, target).await {
            Ok(r) => vec![r],
            Err(e) => return e,
        }
    };
    let sender = ctx.sender.to_string();
    if let Some(r) = roots.iter().find(|r| r.requester.as_deref() != Some(sender.as_str()))
        && !ctx.sender_may_operate()
    {
        return format!(
            "{sender} may not kill run {}: it was started by {}, and only an approver may stop someone else's runs.",
            &r.id[..8.min(r.id.len())],
            r.requester.as_deref().unwrap_or("someone else")
        );
    }
    let killed = kill_tree(ctx.runtime, roots, &format!("killed by {sender}")).await;
    if killed.is_empty() {
        "Nothing to kill: no matching run is still running.".into()
    } else {
        format!("Killed {} run(s): {}.", killed.len(), killed.join(", "))
    }
}

/// Stop `roots` and all their descendants: gather the whole tree first,
/// record every ending, then stop the work (cancelling a parent first would
/// let its children record their own, uninformative endings). Returns the
/// short ids of the runs stopped.
pub(crate) async fn kill_tree(runtime: &switchboard_runtime::Runtime, roots: Vec<RunRow>, reason: &str) -> Vec<String> {
    let store = runtime.store();
    let mut tree = Vec::new();
    let mut queue = roots;
    while let Some(r) = queue.pop() {
        match store.child_runs(&r.id).await {
            Ok(kids) => queue.extend(kids),
            Err(e) => tracing::error!(run_id = %r.id, error = %e, "cannot read a run's children"),
        }
        tree.push(r);
    }
    let mut killed = Vec::new();
    for r in tree.iter().filter(|r| r.status == "running") {
        let end = RunEnd {
            error: Some(reason),
            ..RunEnd::default()
        };
        if matches!(store.finish_run(&r.id, RunStatus::Cancelled, &end).await, Ok(true)) {
            killed.push(r.id[..8.min(r.id.len())].to_string());
        }
    }
    for r in &tree {
        runtime.core().cancel_run(&r.id);
    }
    killed
}
