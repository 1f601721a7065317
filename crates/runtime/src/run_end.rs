//! Recording how a child turn ended in the run registry.

use crate::agent::{TurnError, TurnReply};
use crate::progress::ProgressRecorder;
use switchboard_store::{RunEnd, RunStatus, Store};

/// The registry status of a turn's result.
pub(crate) fn status_of(result: &Result<TurnReply, TurnError>) -> RunStatus {
    match result {
        Ok(_) => RunStatus::Completed,
        Err(TurnError::Cancelled) => RunStatus::Cancelled,
        Err(TurnError::Timeout(_)) => RunStatus::TimedOut,
        Err(_) => RunStatus::Failed,
    }
}

/// Finish run `run_id` with `result` (the first ending wins over a racing
/// kill); returns the status recorded for it.
pub(crate) async fn record(
    store: &Store,
    run_id: &str,
    result: &Result<TurnReply, TurnError>,
    progress: Option<&ProgressRecorder>,
) -> RunStatus {
    let status = status_of(result);
    let error = result.as_ref().err().map(std::string::ToString::to_string);
    let (output, usage) = match result {
        Ok(r) => (Some(r.text.as_str()), r.usage),
        Err(_) => (None, Default::default()),
    };
    let end = RunEnd {
        output,
        error: error.as_deref(),
        tokens_in: usage.input_tokens as i64,
        tokens_out: usage.output_tokens as i64,
        cost_micros: 0,
        progress: None,
    };
    if let Err(e) = store.runs().finish(run_id, status, &end).await {
        tracing::error!(run_id, error = %e, "cannot record the end of a run");
    }
    if let Some(p) = progress {
        p.flush().await;
    }
    status
}
