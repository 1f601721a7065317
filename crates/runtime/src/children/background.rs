//! Background children: nobody waits for them, so they carry a heartbeat
//! (a member that dies with one running leaves it to be found), progress,
//! a `delegate_results/<uuid>.json` artifact (under the agent's records
//! folder, out of the tools' reach) holding only the task id and output,
//! and an announcement of their end. They are not tied to the turn that
//! started them; only `cancel_task` (or `/subagents kill`) stops them.

use super::{ChildRun, ChildSpec};
use crate::core::Core;
use crate::progress::ProgressRecorder;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Heartbeats are refreshed at least this often while a task runs.
const HEARTBEAT: Duration = Duration::from_secs(30);

/// Run `spec` (its row recorded at `created_at`) on its own; its artifact
/// goes into `artifacts`.
pub(super) fn start(core: &Arc<Core>, spec: ChildSpec, created_at: i64, artifacts: PathBuf) {
    let ChildSpec {
        row,
        mut parts,
        task,
        timeout,
        verdict,
    } = spec;
    let id = row.id.clone();
    let budget = timeout.map_or(0, |t| t.as_secs());
    let progress = Arc::new(ProgressRecorder::new(&id, core.store.clone(), budget));
    parts.cancel = CancellationToken::new();
    parts.scope.progress = Some(progress.clone());
    // Registered from now until the task ends, however it ends (a panic
    // included): a kill before it starts running stops it too.
    let child = ChildRun::begin(core, &id, parts);
    let core = core.clone();
    // Outlives the tool call that started it: its own span, kept in the
    // caller's trace (see `switchboard_telemetry::traces::continue_trace`).
    let span = tracing::info_span!(parent: None, "background_run", run_id = %id);
    switchboard_telemetry::traces::continue_trace(&span);
    tokio::spawn(tracing::Instrument::instrument(
        async move {
            let heartbeat = beat(&core, &id);
            let ran = child.run(&task, timeout, super::span_of(&child, &row)).await;
            let outcome = verdict.read(&ran);
            heartbeat.abort();
            // The final progress is written with the ending (a kill that ended
            // the row first gets it written after); then the artifact and the
            // announcement.
            let last = progress.finish();
            let recorded = child.finish(&outcome, Some(&last)).await;
            let announced = async {
                // When this ending is the one recorded, the row is known without
                // reading it back; otherwise (a cancel won) it is read.
                let queued = if recorded {
                    let end = outcome.end(Some(&last));
                    super::announce_row(
                        &core.store,
                        &row.ended(created_at, core.store.now_ms(), outcome.status, &end),
                    )
                    .await
                } else {
                    super::announce_run(&core.store, &id).await
                };
                if let Err(e) = queued {
                    tracing::error!(run_id = %id, error = %e, "cannot queue the announcement");
                }
            };
            tokio::join!(write_artifact(&core, &artifacts, &id, &outcome.result), announced);
            tracing::info!(run_id = %id, status = outcome.status.as_str(), "background task ended");
        },
        span,
    ));
}

/// Refresh run `id`'s heartbeat until aborted.
fn beat(core: &Core, id: &str) -> tokio::task::JoinHandle<()> {
    let (store, id) = (core.store.clone(), id.to_string());
    tokio::spawn(async move {
        // The row was inserted with a fresh heartbeat; the first refresh is
        // due one period later.
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + HEARTBEAT, HEARTBEAT);
        loop {
            tick.tick().await;
            if let Err(e) = store.runs().heartbeat(&id).await {
                tracing::warn!(run_id = %id, error = %e, "heartbeat failed");
            }
        }
    })
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
