//! One lifecycle for every run that is not a person's turn — subagents,
//! child sessions, delegations (foreground and background) and cron jobs:
//! its row recorded in the run registry, the run assembled and registered
//! with the live registry (so a kill from chat, the console or another
//! gateway stops it rather than only marking it), run under its deadline,
//! and its ending recorded (the first ending wins over a racing kill).

use crate::agent::{AgentRun, TurnError, TurnReply};
use crate::core::{Core, RunParts};
use crate::live::RunRegistration;
use std::sync::Arc;
use std::time::Duration;
use switchboard_store::{NewRun, RunEnd, RunStatus, StoreError};
use tracing::Instrument;

/// A child run between its start and its recorded ending.
pub(crate) struct ChildRun {
    core: Arc<Core>,
    id: String,
    run: AgentRun,
    _registration: RunRegistration,
}

/// Record the start of a child run; returns when it was created.
pub(crate) async fn record(core: &Core, row: &NewRun) -> Result<i64, StoreError> {
    core.store.runs().insert(row).await
}

impl ChildRun {
    /// Assemble `parts` as run `id` (already recorded) and register its
    /// cancellation: from here on a kill stops it, even before it runs.
    pub(crate) fn begin(core: &Arc<Core>, id: &str, mut parts: RunParts) -> Self {
        parts.scope.run_id = Some(id.to_string());
        let run = core.assemble(parts);
        let registration = core.live.register_run(id, &run.ctx.cancel);
        Self {
            core: core.clone(),
            id: id.to_string(),
            run,
            _registration: registration,
        }
    }

    /// The assembled run.
    pub(crate) fn agent_run(&self) -> &AgentRun {
        &self.run
    }

    /// Run `task` inside `span`; after `timeout` (when given) the run is
    /// cancelled and ends as [`TurnError::Timeout`].
    pub(crate) async fn run(
        &self,
        task: &str,
        timeout: Option<Duration>,
        span: tracing::Span,
    ) -> Result<TurnReply, TurnError> {
        let fut = self.run.run(task).instrument(span);
        let Some(limit) = timeout else {
            return fut.await;
        };
        match tokio::time::timeout(limit, fut).await {
            Ok(result) => result,
            Err(_) => {
                self.run.ctx.cancel.cancel();
                Err(TurnError::Timeout(limit.as_secs()))
            }
        }
    }

    /// Record how the turn ended (its reply, tokens and progress); returns
    /// the status recorded for it.
    pub(crate) async fn finish(self, result: &Result<TurnReply, TurnError>) -> RunStatus {
        crate::run_end::record(
            &self.core.store,
            &self.id,
            result,
            self.run.ctx.scope.progress.as_deref(),
        )
        .await
    }

    /// Record an ending the caller rendered itself (a delegation's answer
    /// and status). True when this ending is the one recorded. The last
    /// progress is written first, unless the ending carries it (then it is
    /// written after, only when a racing kill ended the run first).
    pub(crate) async fn finish_as(self, status: RunStatus, end: &RunEnd<'_>) -> bool {
        let progress = self.run.ctx.scope.progress.as_ref();
        if let Some(p) = progress.filter(|_| end.progress.is_none()) {
            p.flush().await;
        }
        let recorded = match self.core.store.runs().finish(&self.id, status, end).await {
            Ok(recorded) => recorded,
            Err(e) => {
                tracing::error!(run_id = %self.id, error = %e, "cannot record the end of a child run");
                false
            }
        };
        if let Some(p) = progress.filter(|_| !recorded && end.progress.is_some()) {
            p.flush().await;
        }
        recorded
    }
}
