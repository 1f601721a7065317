//! A planned delegation handed to the child-run engine: waited for (the
//! foreground and each branch of a parallel fan-out) or in the background.

use super::child::{self, Plan};
use crate::children::{ChildSpec, Detached, Verdict};
use crate::core::Core;
use crate::scope::TreeBudget;
use crate::tools::{ToolContext, ToolResult};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The engine's spec of `plan`, run as `run_id` for `message`, within
/// `timeout` seconds.
fn spec(plan: Plan, ctx: &ToolContext, run_id: &str, message: &str, timeout: u64) -> ChildSpec {
    let row = child::new_run(&plan, ctx, run_id, message);
    ChildSpec {
        row,
        parts: plan.parts,
        task: message.to_string(),
        timeout: Some(Duration::from_secs(timeout)),
        verdict: Verdict::Delegate {
            target: plan.target,
            agentic: plan.agentic,
        },
    }
}

/// Run one child whose caller waits for it, stopped by `cancel`.
pub(crate) async fn run_waited(
    core: &Arc<Core>,
    ctx: &ToolContext,
    mut plan: Plan,
    message: &str,
    cancel: CancellationToken,
) -> Result<String, String> {
    let target = plan.target.clone();
    let timeout = plan.foreground_timeout;
    plan.parts.cancel = cancel;
    let run_id = uuid::Uuid::new_v4().to_string();
    match crate::children::wait(core, spec(plan, ctx, &run_id, message, timeout)).await {
        Ok(outcome) => outcome.result,
        Err(e) => {
            tracing::error!(error = %e, "cannot record a delegated run");
            Err(format!("Agent '{target}' failed: the run could not be recorded"))
        }
    }
}

/// A foreground delegation: the caller waits; the child dies with the turn.
pub(crate) async fn run_foreground(core: &Arc<Core>, ctx: &ToolContext, plan: Plan, message: &str) -> ToolResult {
    match run_waited(core, ctx, plan, message, ctx.cancel.child_token()).await {
        Ok(text) => ToolResult::ok(text),
        Err(e) => ToolResult::fail(e),
    }
}

/// A background delegation: a new root with its own tree budget, not tied
/// to the caller's turn; its end is announced into the chat.
pub(crate) async fn start_background(core: &Arc<Core>, ctx: &ToolContext, mut plan: Plan, message: &str) -> ToolResult {
    let task_id = uuid::Uuid::new_v4().to_string();
    let target = plan.target.clone();
    let timeout = plan.background_timeout;
    plan.parts.scope.tree = plan
        .parts
        .agent
        .runtime
        .max_execution_tree_iterations
        .map(|n| Arc::new(TreeBudget::new(n)));
    plan.parts.scope.is_tree_root = true;
    plan.parts.scope.root_id = Some(task_id.clone());
    let mut spec = spec(plan, ctx, &task_id, message, timeout);
    spec.row.label = Some("background".into());
    spec.row.announce = true;
    let artifacts = core.records_dir(&ctx.agent).join("delegate_results");
    if let Err(e) = crate::children::detach(core, spec, Detached::Background(artifacts)).await {
        tracing::error!(error = %e, "cannot record a background task");
        return ToolResult::fail(format!("Agent '{target}' failed: the task could not be recorded"));
    }
    ToolResult::ok(format!(
        "Background task started for agent '{target}'.\ntask_id: {task_id}\nUse action='check_result' with task_id='{task_id}' to retrieve the result."
    ))
}
