//! Task management: `check_result`, `list_results`, `cancel_task`,
//! `await_sessions`. A caller sees only tasks whose recorded delegation
//! chain contains its alias and that were asked for in its own session
//! (the chat, or the run, it works in) or by a run that session started
//! (a child passing a task id up), or that no person asked for (a cron
//! run's): a task started in a person's DM is not read or cancelled from a
//! group the same agent answers in.

use super::args::Args;
use crate::core::Core;
use crate::tools::ToolResult;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::time::Duration;
use switchboard_store::{RunEnd, RunKind, RunRow, RunStatus, StoreError, now_ms};

const DEFAULT_WAIT_MS: u64 = 30_000;
const MAX_WAIT_MS: u64 = 120_000;

/// How many runs up a task's parents are looked at for the caller's session.
const PARENTS: usize = 8;

/// Who manages tasks: the calling agent, in its session.
#[derive(Clone, Copy)]
pub(crate) struct Caller<'a> {
    pub agent: &'a str,
    pub session: &'a str,
}

impl Caller<'_> {
    /// Whether `row` is a delegate task this caller may see (see the module doc).
    async fn sees(&self, core: &Core, row: &RunRow) -> Result<bool, StoreError> {
        if row.kind != RunKind::Delegate || !row.owner_chain.iter().any(|o| o == self.agent) {
            return Ok(false);
        }
        if row.requester.is_none() {
            return Ok(true);
        }
        let (mut session, mut parent) = (row.requester_session.clone(), row.parent_id.clone());
        for _ in 0..PARENTS {
            if session.as_deref() == Some(self.session) {
                return Ok(true);
            }
            let Some(id) = parent else {
                return Ok(false);
            };
            let Some(p) = core.store.runs().get(&id).await? else {
                return Ok(false);
            };
            (session, parent) = (p.requester_session, p.parent_id);
        }
        Ok(session.as_deref() == Some(self.session))
    }
}

fn not_found(id: &str) -> ToolResult {
    ToolResult::fail(format!("No result found for task_id '{id}'"))
}

fn unreadable(e: &StoreError) -> ToolResult {
    tracing::error!(error = %e, "task lookup failed");
    ToolResult::fail("the task registry could not be read (storage error)")
}

/// The row, if it is a delegate task `caller` may see.
async fn visible(core: &Core, caller: Caller<'_>, id: &str) -> Result<Option<RunRow>, ToolResult> {
    let row = match core.store.runs().get(id).await {
        Ok(Some(row)) => row,
        Ok(None) => return Ok(None),
        Err(e) => return Err(unreadable(&e)),
    };
    match caller.sees(core, &row).await {
        Ok(true) => Ok(Some(row)),
        Ok(false) => Ok(None),
        Err(e) => Err(unreadable(&e)),
    }
}

/// The view of one task: lifecycle and output from the row, progress with
/// `elapsed_secs` computed now.
fn view(row: &RunRow) -> Value {
    let progress = row
        .progress
        .as_deref()
        .and_then(|p| serde_json::from_str::<Value>(p).ok())
        .map(|mut p| {
            let end = row.ended_at.unwrap_or_else(now_ms);
            let start = row.started_at.unwrap_or(row.created_at);
            p["elapsed_secs"] = json!((end - start).max(0) / 1000);
            p
        });
    json!({
        "task_id": row.id,
        "agent": row.agent,
        "status": row.status,
        "output": row.output,
        "error": row.error,
        "created_at": row.created_at,
        "ended_at": row.ended_at,
        "progress": progress,
    })
}

pub(crate) async fn check_result(core: &Core, caller: Caller<'_>, args: &Args) -> ToolResult {
    let Some(id) = args.task_id.as_deref() else {
        return ToolResult::fail("Missing 'task_id' parameter");
    };
    match visible(core, caller, id).await {
        Ok(Some(row)) => ToolResult::ok(view(&row).to_string()),
        Ok(None) => not_found(id),
        Err(e) => e,
    }
}

pub(crate) async fn list_results(core: &Core, caller: Caller<'_>) -> ToolResult {
    let rows = match core.store.runs().owned_by(RunKind::Delegate, caller.agent, 100).await {
        Ok(rows) => rows,
        Err(e) => return unreadable(&e),
    };
    let mut items = Vec::new();
    for r in rows {
        match caller.sees(core, &r).await {
            Ok(true) => items.push(
                json!({"task_id": r.id, "agent": r.agent, "status": r.status, "created_at": r.created_at, "ended_at": r.ended_at}),
            ),
            Ok(false) => {}
            Err(e) => return unreadable(&e),
        }
    }
    ToolResult::ok(json!({ "tasks": items }).to_string())
}

pub(crate) async fn cancel_task(core: &Core, caller: Caller<'_>, args: &Args) -> ToolResult {
    let Some(id) = args.task_id.as_deref() else {
        return ToolResult::fail("Missing 'task_id' parameter");
    };
    let row = match visible(core, caller, id).await {
        Ok(Some(row)) => row,
        Ok(None) => return not_found(id),
        Err(e) => return e,
    };
    if row.status != RunStatus::Running {
        return ToolResult::ok(format!("Task '{id}' already ended with status {}.", row.status));
    }
    // Record the cancellation first, so the row says who ended it even
    // though the task's own ending races this one; then stop the work.
    let end = RunEnd {
        error: Some("cancelled by cancel_task"),
        ..RunEnd::default()
    };
    let recorded = core.store.runs().finish(id, RunStatus::Cancelled, &end).await;
    let token = core.live.unregister_run(id);
    if let Some(t) = token {
        t.cancel();
    }
    match recorded {
        Ok(true) => ToolResult::ok(format!("Task '{id}' cancelled.")),
        Ok(false) => ToolResult::ok(format!("Task '{id}' had already ended.")),
        Err(e) => {
            tracing::error!(error = %e, "cancel_task failed");
            ToolResult::fail("the cancellation could not be recorded (storage error)")
        }
    }
}

pub(crate) async fn await_sessions(
    core: &Core,
    caller: Caller<'_>,
    args: &Args,
    cancel: &tokio_util::sync::CancellationToken,
) -> ToolResult {
    if args.task_ids.is_empty() {
        return ToolResult::fail("Missing 'task_ids' parameter: list the task ids to wait for");
    }
    let mut seen = HashSet::new();
    for id in &args.task_ids {
        if !seen.insert(id.as_str()) {
            return ToolResult::fail(format!("Duplicate task_id '{id}' in task_ids; list each task once"));
        }
    }
    let wait = Duration::from_millis(args.timeout_ms.unwrap_or(DEFAULT_WAIT_MS).min(MAX_WAIT_MS));
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let mut rows = Vec::new();
        let mut missing = Vec::new();
        for id in &args.task_ids {
            match visible(core, caller, id).await {
                Ok(Some(r)) => rows.push(r),
                Ok(None) => missing.push(id.clone()),
                Err(e) => return e,
            }
        }
        let pending: Vec<&RunRow> = rows.iter().filter(|r| r.status == RunStatus::Running).collect();
        let timed_out = tokio::time::Instant::now() >= deadline;
        if pending.is_empty() || timed_out {
            let completed: Vec<&str> = rows
                .iter()
                .filter(|r| r.status == RunStatus::Completed)
                .map(|r| r.id.as_str())
                .collect();
            let failed: Vec<&str> = rows
                .iter()
                .filter(|r| r.status != RunStatus::Completed && r.status != RunStatus::Running)
                .map(|r| r.id.as_str())
                .collect();
            let results: serde_json::Map<String, Value> = rows.iter().map(|r| (r.id.clone(), view(r))).collect();
            let body = json!({
                "status": if pending.is_empty() { "complete" } else { "timeout" },
                "completed": completed,
                "pending": pending.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
                "missing": missing,
                "failed": failed,
                "results": results,
            });
            if pending.is_empty() && missing.is_empty() {
                return ToolResult::ok(body.to_string());
            }
            return ToolResult {
                success: false,
                output: body.to_string(),
                error: Some("one or more tasks are still pending or missing".into()),
            };
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(25)) => {}
            _ = cancel.cancelled() => return ToolResult::fail("await_sessions cancelled with the turn"),
        }
    }
}
