//! A child session (`sessions_spawn`): it runs in the global `subagent`
//! lane, then an announce step in its own session decides what to tell the
//! requester (or `ANNOUNCE_SKIP`), and its transcript is written to the
//! agent's records.

use super::ANNOUNCE_SKIP;
use super::{ChildRun, ChildSpec, Verdict};
use crate::core::{Core, RunParts};
use crate::tools::ToolRegistry;
use std::sync::Arc;
use std::time::Duration;

/// The longest an announce step may take; past it the final answer is
/// announced (well inside the ten minutes after which the gateway's sweep
/// would announce the run in its place).
const ANNOUNCE_STEP_LIMIT: Duration = Duration::from_secs(300);

const ANNOUNCE_PROMPT: &str = "Your task has ended. Write the announcement for whoever asked for it: the result, briefly. If there is nothing worth telling them, answer exactly ANNOUNCE_SKIP.";

/// Start the child (its row recorded) in the background; it waits for a
/// lane permit first. With `delete`, its transcript is archived at once.
pub(super) fn start(core: &Arc<Core>, spec: ChildSpec, delete: bool) {
    let ChildSpec {
        row,
        parts,
        task,
        timeout,
        ..
    } = spec;
    let core = core.clone();
    // Outlives the tool call that started it: its own span, kept in the
    // caller's trace (see `switchboard_telemetry::traces::continue_trace`).
    let span = tracing::info_span!(parent: None, "background_session", run_id = %row.id);
    switchboard_telemetry::traces::continue_trace(&span);
    tokio::spawn(tracing::Instrument::instrument(
        async move {
            let run_id = row.id.clone();
            let cancel = parts.cancel.clone();
            // A tool-free run in the same session, with its own cancellation.
            let mut announce_parts = RunParts {
                registry: ToolRegistry::default(),
                events: None,
                cancel: tokio_util::sync::CancellationToken::new(),
                ..parts.clone()
            };
            // The announce step reads what the child did.
            announce_parts.scope.fresh_session = false;
            // Registered before it waits: a kill stops it in the queue too.
            let child = ChildRun::begin(&core, &run_id, parts);
            let permit = tokio::select! {
                p = core.live.lane.clone().acquire_owned() => p.ok(),
                _ = cancel.cancelled() => None,
            };
            // The permit is held through the announce step: both are the child's work.
            let ran = match &permit {
                None => Err(crate::TurnError::Cancelled),
                Some(_) => child.run(&task, timeout, super::span_of(&child, &row)).await,
            };
            let outcome = Verdict::Plain.read(&ran);
            child.finish(&outcome, None).await;
            // The announce step runs in the child's own session, without tools,
            // and only after a success: failures are always announced.
            let announce_text = match outcome.result {
                Ok(output) => {
                    let step = core.assemble(announce_parts);
                    match tokio::time::timeout(ANNOUNCE_STEP_LIMIT, step.run(ANNOUNCE_PROMPT)).await {
                        Ok(Ok(r)) if r.text.trim() == ANNOUNCE_SKIP => None,
                        Ok(Ok(r)) => Some(r.text),
                        Ok(Err(e)) => {
                            tracing::warn!(run_id, error = %e, "announce step failed; announcing the final answer");
                            Some(output)
                        }
                        Err(_) => {
                            step.ctx.cancel.cancel();
                            tracing::warn!(run_id, "announce step took too long; announcing the final answer");
                            Some(output)
                        }
                    }
                }
                Err(_) => Some(String::new()),
            };
            match announce_text {
                Some(text) => super::relay::deliver(&core, &run_id, &text).await,
                None => {
                    tracing::info!(run_id, "announce step answered ANNOUNCE_SKIP; nothing posted");
                    if let Err(e) = core.store.runs().announcement_not_needed(&run_id).await {
                        tracing::warn!(run_id, error = %e, "cannot record that nothing is announced");
                    }
                }
            }
            drop(permit);
            write_transcript(&core, &run_id, delete).await;
        },
        span,
    ));
}

/// Write the child's transcript to `sessions/<run id>.jsonl` in the agent's
/// records folder (`Core::records_dir`, out of the tools' reach);
/// with `cleanup = "delete"`, archive it right away.
async fn write_transcript(core: &Core, run_id: &str, delete: bool) {
    let Ok(Some(row)) = core.store.runs().get(run_id).await else {
        return;
    };
    let dir = core.records_dir(&row.agent).join("sessions");
    let path = dir.join(format!("{run_id}.jsonl"));
    let body = match core.store.sessions().transcript(&row.session_key, 10_000).await {
        Ok(rows) => rows.into_iter().map(|r| r.body).collect::<Vec<_>>().join("\n"),
        Err(e) => {
            tracing::warn!(run_id, error = %e, "cannot read a transcript");
            return;
        }
    };
    let write = async {
        tokio::fs::create_dir_all(&dir).await?;
        tokio::fs::write(&path, body).await
    };
    if let Err(e) = write.await {
        tracing::warn!(run_id, error = %e, "cannot write a transcript file");
        return;
    }
    if delete {
        super::archive::archive_one(core, run_id, &path).await;
    }
}
