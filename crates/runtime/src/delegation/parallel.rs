//! `parallel: [...]`: the same prompt to several agents at once.

use super::child;
use crate::core::Core;
use crate::rules::{AgentRules, Rules};
use crate::tools::{ToolContext, ToolResult};
use std::sync::Arc;

pub(crate) async fn run(
    core: &Arc<Core>,
    rules: &Arc<Rules>,
    ctx: &ToolContext,
    caller: &AgentRules,
    targets: &[String],
    message: &str,
) -> ToolResult {
    let jobs = targets.iter().map(|target| async move {
        let plan = match child::plan(core, rules, ctx, caller, target) {
            Ok(p) => p,
            Err(e) => return (target.clone(), Err(e)),
        };
        // Children with a tool loop die with the turn; a plain model call
        // ends with its own timeout.
        let cancel = if plan.agentic {
            ctx.cancel.child_token()
        } else {
            tokio_util::sync::CancellationToken::new()
        };
        (
            target.clone(),
            super::run::run_waited(core, ctx, plan, message, cancel).await,
        )
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
