//! Running one planned delegated child through the child-run lifecycle,
//! and the result strings the caller's model reads.

use super::child::{self, Plan};
use crate::agent::{TurnError, TurnReply};
use crate::child_run::ChildRun;
use crate::core::Core;
use crate::progress::ProgressRecorder;
use crate::tools::{ToolContext, ToolResult};
use std::sync::Arc;
use std::time::Duration;
use switchboard_config::DelegateMode;
use switchboard_store::{RunEnd, RunStatus};
use tokio_util::sync::CancellationToken;

const FALLBACK_WARNING: &str = "Warning: The delegated agent recovered through a provider fallback. Provider failure details were logged and omitted from this result.";

/// How a child ended, ready for the tool result and the run row.
pub(crate) struct Outcome {
    pub result: Result<String, String>,
    pub status: RunStatus,
    pub reply: Option<TurnReply>,
}

/// A planned child, recorded and registered, ready to run.
pub(crate) struct Begun {
    child: ChildRun,
    target: String,
    mode: DelegateMode,
    agentic: bool,
    timeout: u64,
}

/// Begin `plan` as run `run_id` (already recorded) under `cancel`, with
/// `timeout` seconds to run. A caller that brings its own progress
/// recorder writes the final progress with the ending.
pub(crate) fn begin(
    core: &Arc<Core>,
    mut plan: Plan,
    run_id: &str,
    cancel: CancellationToken,
    timeout: u64,
    progress: Option<Arc<ProgressRecorder>>,
) -> Begun {
    plan.parts.cancel = cancel;
    plan.parts.scope.progress = progress;
    plan.parts.scope.deadline = Some(tokio::time::Instant::now() + Duration::from_secs(timeout));
    Begun {
        child: ChildRun::begin(core, run_id, plan.parts),
        target: plan.target,
        mode: plan.mode,
        agentic: plan.agentic,
        timeout,
    }
}

impl Begun {
    /// Run the child to its end.
    pub(crate) async fn execute(&self, message: &str) -> Outcome {
        let target = &self.target;
        let ctx = &self.child.agent_run().ctx;
        let span = tracing::info_span!("delegate", agent_alias = %target, session = %switchboard_telemetry::traces::session_tag(&ctx.session_key), run_id = ctx.scope.run_id.as_deref().unwrap_or_default(), mode = ?self.mode);
        let ran = self
            .child
            .run(message, Some(Duration::from_secs(self.timeout)), span)
            .await;
        let failed = |result: String, status| Outcome {
            result: Err(result),
            status,
            reply: None,
        };
        match ran {
            Err(TurnError::Timeout(secs)) => {
                failed(format!("Agent '{target}' timed out after {secs}s"), RunStatus::TimedOut)
            }
            Err(TurnError::Cancelled) => failed(
                format!("Agent '{target}' failed: {}", TurnError::Cancelled),
                RunStatus::Cancelled,
            ),
            Err(e) => failed(format!("Agent '{target}' failed: {e}"), RunStatus::Failed),
            Ok(reply) => {
                let result = render_success(target, &reply, self.agentic);
                let status = if result.is_ok() {
                    RunStatus::Completed
                } else {
                    RunStatus::Failed
                };
                Outcome {
                    result,
                    status,
                    reply: Some(reply),
                }
            }
        }
    }

    /// Record `outcome` as `end` (see [`run_end`]). True when this ending
    /// is the one recorded.
    pub(crate) async fn finish(self, outcome: &Outcome, end: &RunEnd<'_>) -> bool {
        self.child.finish_as(outcome.status, end).await
    }
}

/// Record, begin, run and finish one child whose caller waits for it.
pub(crate) async fn run_waited(
    core: &Arc<Core>,
    ctx: &ToolContext,
    plan: Plan,
    message: &str,
    cancel: CancellationToken,
) -> Result<String, String> {
    let run_id = uuid::Uuid::new_v4().to_string();
    if let Err(e) = crate::child_run::record(core, &child::new_run(&plan, ctx, &run_id, message)).await {
        tracing::error!(error = %e, "cannot record a delegated run");
        return Err(format!("Agent '{}' failed: the run could not be recorded", plan.target));
    }
    let timeout = plan.foreground_timeout;
    let begun = begin(core, plan, &run_id, cancel, timeout, None);
    let outcome = begun.execute(message).await;
    begun.finish(&outcome, &run_end(&outcome, None)).await;
    outcome.result
}

/// A foreground delegation: the caller waits; the child dies with the turn.
pub(crate) async fn run_foreground(core: &Arc<Core>, ctx: &ToolContext, plan: Plan, message: &str) -> ToolResult {
    match run_waited(core, ctx, plan, message, ctx.cancel.child_token()).await {
        Ok(text) => ToolResult::ok(text),
        Err(e) => ToolResult::fail(e),
    }
}

/// `[Agent '<t>' (<provider_type>/<model>)]\n<answer>`, with the fallback
/// attribution and warning when another provider served the answer.
fn render_success(target: &str, reply: &TurnReply, agentic: bool) -> Result<String, String> {
    if reply.text.trim().is_empty() {
        return Err(format!(
            "Agent '{target}' failed: model provider returned an invalid semantic completion."
        ));
    }
    let Some(s) = &reply.served else {
        return Ok(reply.text.clone());
    };
    if s.fell_back() {
        let suffix = if agentic { ", agentic" } else { "" };
        Ok(format!(
            "[Agent '{target}' (requested: {}/{}; served: {}/{}{suffix})]\n{}\n\n{FALLBACK_WARNING}",
            s.requested_kind.as_str(),
            s.requested_model,
            s.kind.as_str(),
            s.model,
            reply.text
        ))
    } else {
        Ok(format!(
            "[Agent '{target}' ({}/{})]\n{}",
            s.kind.as_str(),
            s.model,
            reply.text
        ))
    }
}

/// What the run row records of `outcome`.
pub(crate) fn run_end<'a>(outcome: &'a Outcome, progress: Option<&'a str>) -> RunEnd<'a> {
    let (output, error) = match &outcome.result {
        Ok(text) => (Some(text.as_str()), None),
        Err(e) => (None, Some(e.as_str())),
    };
    let usage = outcome.reply.as_ref().map(|r| r.usage).unwrap_or_default();
    RunEnd {
        output,
        error,
        tokens_in: usage.input_tokens as i64,
        tokens_out: usage.output_tokens as i64,
        cost_micros: 0,
        progress,
    }
}
