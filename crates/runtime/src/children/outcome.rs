//! How a child run's result is read: the status its registry row records,
//! the text (or failure) its caller and announcement get, and the tokens.

use crate::agent::{TurnError, TurnReply};
use switchboard_store::{RunEnd, RunStatus};

const FALLBACK_WARNING: &str = "Warning: The delegated agent recovered through a provider fallback. Provider failure details were logged and omitted from this result.";

/// How a kind of child reads its turn's result.
#[derive(Clone)]
pub(crate) enum Verdict {
    /// The answer as it is; failures as the turn error says them.
    Plain,
    /// A delegation's contract strings (docs/delegation.md): the answer
    /// attributed to `target` and its provider, an empty answer a failure.
    Delegate { target: String, agentic: bool },
}

/// How a child ended, ready for its caller and its registry row.
pub(crate) struct Outcome {
    /// The text the caller (or the announcement) gets, or the failure.
    pub result: Result<String, String>,
    /// The status recorded.
    pub status: RunStatus,
    /// The turn's reply, when it gave one (for its tokens).
    pub reply: Option<TurnReply>,
}

impl Verdict {
    /// Read `ran`, the child's turn.
    pub(crate) fn read(&self, ran: &Result<TurnReply, TurnError>) -> Outcome {
        let failed = |result: String, status| Outcome {
            result: Err(result),
            status,
            reply: None,
        };
        match (self, ran) {
            (Self::Plain, Ok(reply)) => Outcome {
                result: Ok(reply.text.clone()),
                status: RunStatus::Completed,
                reply: Some(reply.clone()),
            },
            (Self::Plain, Err(e)) => failed(e.to_string(), status_of_error(e)),
            (Self::Delegate { target, .. }, Err(TurnError::Timeout(secs))) => {
                failed(format!("Agent '{target}' timed out after {secs}s"), RunStatus::TimedOut)
            }
            (Self::Delegate { target, .. }, Err(e)) => {
                failed(format!("Agent '{target}' failed: {e}"), status_of_error(e))
            }
            (Self::Delegate { target, agentic }, Ok(reply)) => {
                let result = render_success(target, reply, *agentic);
                let status = if result.is_ok() {
                    RunStatus::Completed
                } else {
                    RunStatus::Failed
                };
                Outcome {
                    result,
                    status,
                    reply: Some(reply.clone()),
                }
            }
        }
    }
}

/// The registry status of a turn that failed.
fn status_of_error(e: &TurnError) -> RunStatus {
    match e {
        TurnError::Cancelled => RunStatus::Cancelled,
        TurnError::Timeout(_) => RunStatus::TimedOut,
        _ => RunStatus::Failed,
    }
}

impl Outcome {
    /// What the run row records of it, with the last progress when the
    /// ending carries it.
    pub(crate) fn end<'a>(&'a self, progress: Option<&'a str>) -> RunEnd<'a> {
        let (output, error) = match &self.result {
            Ok(text) => (Some(text.as_str()), None),
            Err(e) => (None, Some(e.as_str())),
        };
        let usage = self.reply.as_ref().map(|r| r.usage).unwrap_or_default();
        RunEnd {
            output,
            error,
            tokens_in: usage.input_tokens as i64,
            tokens_out: usage.output_tokens as i64,
            cost_micros: 0,
            progress,
        }
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
