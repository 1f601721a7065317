//! Background delegations: a task row in the control plane, a heartbeat,
//! progress, and a `delegate_results/<uuid>.json` artifact (under the agent's records
//! folder, out of the tools' reach) holding only the
//! task id and output. They are not tied to the turn that started them;
//! only `cancel_task` (or `/subagents kill`) stops them.

use super::child::{self, Plan};
use super::run;
use crate::core::Core;
use crate::progress::ProgressRecorder;
use crate::scope::TreeBudget;
use crate::tools::{ToolContext, ToolResult};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Heartbeats are refreshed at least this often while a task runs.
const HEARTBEAT: Duration = Duration::from_secs(30);

pub(crate) async fn start(core: &Arc<Core>, ctx: &ToolContext, mut plan: Plan, message: String) -> ToolResult {
    let task_id = uuid::Uuid::new_v4().to_string();
    let mut row = child::new_run(&plan, ctx, &task_id, &message);
    row.label = Some("background".into());
    // Nobody waits for it: its end is announced into the chat.
    row.announce = true;
    let created_at = match crate::child_run::record(core, &row).await {
        Ok(at) => at,
        Err(e) => {
            tracing::error!(error = %e, "cannot record a background task");
            return ToolResult::fail(format!(
                "Agent '{}' failed: the task could not be recorded",
                plan.target
            ));
        }
    };
    // A background task starts a new root: its own tree budget, no ties to
    // the caller's turn.
    plan.parts.scope.tree = plan
        .parts
        .profile
        .max_execution_tree_iterations
        .map(|n| Arc::new(TreeBudget::new(n)));
    plan.parts.scope.is_tree_root = true;
    plan.parts.scope.root_id = Some(task_id.clone());
    let artifact_dir = core.records_dir(&ctx.agent).join("delegate_results");
    let target = plan.target.clone();
    let timeout = plan.background_timeout;
    let progress = Arc::new(ProgressRecorder::new(&task_id, core.store.clone(), timeout));
    // Registered from now until the task ends, however it ends (a panic
    // included): a kill before it starts running stops it too.
    let begun = run::begin(
        core,
        plan,
        &task_id,
        CancellationToken::new(),
        timeout,
        Some(progress.clone()),
    );
    let (core2, id) = (core.clone(), task_id.clone());
    // Outlives the tool call that started it: its own span, kept in the
    // caller's trace (see `switchboard_telemetry::traces::continue_trace`).
    let span = tracing::info_span!(parent: None, "background_run", run_id = %task_id);
    switchboard_telemetry::traces::continue_trace(&span);
    tokio::spawn(tracing::Instrument::instrument(
        async move {
            let heartbeat = {
                let (store, id) = (core2.store.clone(), id.clone());
                tokio::spawn(async move {
                    // The row was inserted with a fresh heartbeat; the first
                    // refresh is due one period later.
                    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + HEARTBEAT, HEARTBEAT);
                    loop {
                        tick.tick().await;
                        if let Err(e) = store.runs().heartbeat(&id).await {
                            tracing::warn!(run_id = %id, error = %e, "heartbeat failed");
                        }
                    }
                })
            };
            let outcome = begun.execute(&message).await;
            heartbeat.abort();
            // The final progress is written with the ending (a kill that ended
            // the row first gets it written after); then the artifact and the
            // announcement.
            let last = progress.finish();
            let end = run::run_end(&outcome, Some(&last));
            let recorded = begun.finish(&outcome, &end).await;
            let announced = async {
                // When this ending is the one recorded, the row is known without
                // reading it back; otherwise (a cancel won) it is read.
                let queued = if recorded {
                    crate::announce::announce_row(
                        &core2.store,
                        &row.ended(created_at, core2.store.now_ms(), outcome.status, &end),
                    )
                    .await
                } else {
                    crate::announce::announce_run(&core2.store, &id).await
                };
                if let Err(e) = queued {
                    tracing::error!(run_id = %id, error = %e, "cannot queue the announcement");
                }
            };
            tokio::join!(write_artifact(&core2, &artifact_dir, &id, &outcome.result), announced);
            tracing::info!(run_id = %id, status = outcome.status.as_str(), "background task ended");
        },
        span,
    ));
    ToolResult::ok(format!(
        "Background task started for agent '{target}'.\ntask_id: {task_id}\nUse action='check_result' with task_id='{task_id}' to retrieve the result."
    ))
}

async fn write_artifact(core: &Core, dir: &std::path::Path, id: &str, result: &Result<String, String>) {
    let output = match result {
        Ok(text) => text,
        Err(e) => e,
    };
    let body = serde_json::json!({"task_id": id, "output": output}).to_string();
    if let Err(e) = core
        .artifacts
        .write(dir.join(format!("{id}.json")), body.into_bytes())
        .await
    {
        tracing::warn!(run_id = %id, error = %e, "cannot write the delegate result artifact");
    }
}
