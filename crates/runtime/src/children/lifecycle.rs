//! One lifecycle for every child run: its row recorded in the run
//! registry, the run assembled and registered with the live registry (so a
//! kill from chat, the console or another gateway stops it rather than
//! only marking it, even before it runs), run under its deadline, and its
//! ending recorded (the first ending wins over a racing kill).

use super::Outcome;
use crate::agent::{AgentRun, TurnError, TurnReply};
use crate::core::{Core, RunParts};
use crate::live::RunRegistration;
use std::sync::Arc;
use std::time::Duration;
use switchboard_store::{NewRun, StoreError};
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

    /// Record `outcome` as the run's ending, with `progress` (the last
    /// progress line) when the ending carries it. True when this ending is
    /// the one recorded. Without it, the last progress is written first;
    /// with it, after, and only when a racing kill ended the run first.
    pub(crate) async fn finish(self, outcome: &Outcome, progress: Option<&str>) -> bool {
        let recorder = self.run.ctx.scope.progress.as_ref();
        if let Some(p) = recorder.filter(|_| progress.is_none()) {
            p.flush().await;
        }
        let end = outcome.end(progress);
        let recorded = match self.core.store.runs().finish(&self.id, outcome.status, &end).await {
            Ok(recorded) => recorded,
            Err(e) => {
                tracing::error!(run_id = %self.id, error = %e, "cannot record the end of a child run");
                false
            }
        };
        if let Some(p) = recorder.filter(|_| !recorded && progress.is_some()) {
            p.flush().await;
        }
        recorded
    }
}
