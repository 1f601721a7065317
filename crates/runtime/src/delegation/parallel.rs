//! `parallel: [...]`: the same prompt to several agents at once.

use super::child;
use crate::core::Core;
use crate::tools::{ToolContext, ToolResult};
use std::sync::Arc;

pub(crate) async fn run(
    core: &Arc<Core>,
    ctx: &ToolContext,
    caller: &str,
    targets: &[String],
    message: &str,
) -> ToolResult {
    let jobs = targets.iter().map(|target| async move {
        let plan = match child::plan(core, ctx, caller, target) {
            Ok(p) => p,
            Err(e) => return (target.clone(), Err(e)),
        };
        let run_id = uuid::Uuid::new_v4().to_string();
        if let Err(e) = core
            .store
            .insert_run(&child::new_run(&plan, ctx, &run_id, message))
            .await
        {
            tracing::error!(error = %e, "cannot record a parallel delegated run");
            return (
                target.clone(),
                Err(format!("Agent '{target}' failed: the run could not be recorded")),
            );
        }
        // Children with a tool loop die with the turn; a plain model call
        // ends with its own timeout.
        let cancel = if plan.agentic {
            ctx.cancel.child_token()
        } else {
            tokio_util::sync::CancellationToken::new()
        };
        let timeout = plan.foreground_timeout;
        let outcome = child::execute(core, plan, message, &run_id, cancel, timeout, None).await;
        child::record_end(core, &run_id, outcome.status, &child::run_end(&outcome, None)).await;
        (target.clone(), outcome.result)
    });
    let results = futures::future::join_all(jobs).await;
    let blocks: Vec<String> = results
        .iter()
        .map(|(target, r)| match r {
            Ok(text) => format!("--- {target} (success=true) ---\n{text}"),
            Err(e) => format!("--- {target} (success=false) ---\nError: {e}"),
        })
        .collect();
    // Each block carries its own success flag; the fan-out itself succeeded.
    ToolResult::ok(format!(
        "[Parallel delegation: {} agents]\n\n{}",
        targets.len(),
        blocks.join("\n\n")
    ))
}
