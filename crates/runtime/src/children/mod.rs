//! The child-run engine (docs/delegation.md): every run that is not a
//! person's turn starts here — a same-agent helper (`spawn_subagent`), a
//! delegation to another agent (`delegate`, waited for or in the
//! background), a child session (`sessions_spawn`) and a cron job. The
//! tools only parse their arguments and apply their gates into a
//! [`ChildSpec`]; this module records its row, runs it through one
//! lifecycle (`lifecycle`), reads its result (`outcome`) and is the only
//! writer of announcements (`announce`).

mod announce;
mod archive;
mod background;
mod lifecycle;
mod outcome;
mod relay;
mod session;

pub use announce::{announce_row, announce_run, render, render_with};
pub(crate) use archive::{archive_due, spawn_archiver};
use lifecycle::{ChildRun, record};
pub(crate) use outcome::{Outcome, Verdict};

use crate::agent::{TurnError, TurnReply};
use crate::core::{Core, RunParts};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use switchboard_store::{NewRun, RunKind, StoreError};

/// The announce step's answer that posts nothing.
pub const ANNOUNCE_SKIP: &str = "ANNOUNCE_SKIP";

/// One child run, ready to start.
pub(crate) struct ChildSpec {
    /// Its registry row: who runs it, what kind, under which parent, from
    /// which chat, whether its end is announced.
    pub row: NewRun,
    /// What it runs with (policy, tools, approvals, scope).
    pub parts: RunParts,
    /// What it is asked to do.
    pub task: String,
    /// How long it may run (for a waited or background child also the
    /// longest an approval inside it waits).
    pub timeout: Option<Duration>,
    /// How its result is read.
    pub verdict: Verdict,
}

/// A child nobody waits for.
pub(crate) enum Detached {
    /// It runs on its own with a heartbeat and progress, writes its result
    /// artifact into this folder, and is announced.
    Background(PathBuf),
    /// A child session in the subagent lane, announced through its
    /// announce step; with `true` its transcript is archived at once.
    Session(bool),
}

/// Whether a child session at spawn depth `depth` announces into the chat
/// (a child of the person's own session) rather than into its parent
/// session only.
pub(crate) fn announces_into_chat(depth: u32) -> bool {
    depth < 2
}

/// Record `spec`'s run, run it to its end and record that: the caller
/// waits, and the child stops with the caller's cancellation. An error
/// means the run could not be recorded, and nothing ran.
pub(crate) async fn wait(core: &Arc<Core>, spec: ChildSpec) -> Result<Outcome, StoreError> {
    Ok(wait_for_turn(core, spec).await?.0)
}

/// [`wait`], also handing back the child's turn as it ended (a cron job
/// delivers its reply).
pub(crate) async fn wait_for_turn(
    core: &Arc<Core>,
    spec: ChildSpec,
) -> Result<(Outcome, Result<TurnReply, TurnError>), StoreError> {
    let spec = timed(spec);
    record(core, &spec.row).await?;
    let child = ChildRun::begin(core, &spec.row.id, spec.parts);
    let ran = child.run(&spec.task, spec.timeout, span_of(&child, &spec.row)).await;
    let outcome = spec.verdict.read(&ran);
    child.finish(&outcome, None).await;
    Ok((outcome, ran))
}

/// Record `spec`'s run and start it on its own, as `how` says. An error
/// means the run could not be recorded, and nothing was started.
pub(crate) async fn detach(core: &Arc<Core>, spec: ChildSpec, how: Detached) -> Result<(), StoreError> {
    // A child session's timeout starts once it has a lane permit (it may
    // queue first), so it gets no deadline from now; the others run at once.
    let spec = match how {
        Detached::Session(_) => spec,
        Detached::Background(_) => timed(spec),
    };
    let created_at = record(core, &spec.row).await?;
    match how {
        Detached::Background(artifacts) => background::start(core, spec, created_at, artifacts),
        Detached::Session(delete) => session::start(core, spec, delete),
    }
    Ok(())
}

/// A child with a timeout has a deadline: what waits inside it (an
/// approval) waits no longer.
fn timed(mut spec: ChildSpec) -> ChildSpec {
    if let Some(limit) = spec.timeout {
        spec.parts.scope.deadline = Some(tokio::time::Instant::now() + limit);
    }
    spec
}

/// The span a child runs in: `delegate` for delegations, `subagent` for
/// the others (a cron job's with its job id, from the row's label).
fn span_of(child: &ChildRun, row: &NewRun) -> tracing::Span {
    let session = switchboard_telemetry::traces::session_tag(&child.agent_run().ctx.session_key);
    let (agent, run_id) = (&row.agent, &row.id);
    match row.kind {
        RunKind::Delegate => tracing::info_span!("delegate", agent_alias = %agent, %session, %run_id),
        RunKind::Cron => tracing::info_span!(
            "subagent",
            category = "cron",
            agent_alias = %agent,
            cron_job_id = %row.label.as_deref().unwrap_or_default(),
            %run_id,
            spawn_site = "cron"
        ),
        _ => tracing::info_span!("subagent", agent_alias = %agent, %session, %run_id),
    }
}
