//! Approvals asked in the terminal (`switchboard chat`): the person at the
//! keyboard is the operator. Every request and answer is stored, like any
//! other approval, for the audit trail.

use async_trait::async_trait;
use parking_lot::Mutex;
use std::time::Duration;
use switchboard_core::ApprovalChoice;
use switchboard_runtime::{ApprovalBroker, ApprovalOutcome, ApprovalRequest};
use switchboard_store::{ApprovalEnd, ApprovalStatus, Store};
use tokio::sync::oneshot;

#[derive(Debug, PartialEq)]
enum Answer {
    Allow { always: bool },
    Deny { reason: Option<String> },
}

struct Pending {
    id: String,
    tx: oneshot::Sender<Answer>,
}

pub(crate) struct CliBroker {
    store: Store,
    user: String,
    pending: Mutex<Option<Pending>>,
    /// One prompt on screen at a time.
    asking: tokio::sync::Mutex<()>,
}

impl CliBroker {
    pub(crate) fn new(store: Store, user: String) -> Self {
        Self {
            store,
            user,
            pending: Mutex::new(None),
            asking: tokio::sync::Mutex::new(()),
        }
    }

    pub(crate) fn is_waiting(&self) -> bool {
        self.pending.lock().is_some()
    }

    /// Offer a typed line as the answer to the waiting prompt. Returns what
    /// to tell the person.
    pub(crate) fn answer(&self, line: &str) -> String {
        let mut slot = self.pending.lock();
        let Some(pending) = slot.as_ref() else {
            return "No approval request is waiting.".into();
        };
        let Some(answer) = parse_answer(line, &pending.id) else {
            return format!(
                "Approval {} is waiting: answer y (allow once), a (always, this run) or n (deny).",
                pending.id
            );
        };
        let pending = slot.take().expect("checked above");
        let text = match &answer {
            Answer::Allow { always: false } => "Allowed once.",
            Answer::Allow { always: true } => "Allowed for the rest of this run.",
            Answer::Deny { .. } => "Denied.",
        };
        let _ = pending.tx.send(answer);
        text.into()
    }

    /// The terminal closed: a waiting request can no longer be answered.
    pub(crate) fn close(&self) {
        self.pending.lock().take();
    }
}

/// The terminal's short answers (`y`, `a`, `n`), or `/approve` and
/// `/deny` of request `id` as the command catalog reads them.
fn parse_answer(line: &str, id: &str) -> Option<Answer> {
    let first = line.split_whitespace().next()?.to_lowercase();
    match first.as_str() {
        "y" | "yes" | "allow" => return Some(Answer::Allow { always: false }),
        "a" | "always" => return Some(Answer::Allow { always: true }),
        "n" | "no" | "deny" => return Some(Answer::Deny { reason: None }),
        _ => {}
    }
    match crate::commands::parse(line)? {
        crate::commands::Command::Decide {
            id: asked,
            choice,
            reason,
        } if asked == id => Some(match choice {
            ApprovalChoice::AllowOnce => Answer::Allow { always: false },
            ApprovalChoice::Always => Answer::Allow { always: true },
            ApprovalChoice::Deny => Answer::Deny { reason },
        }),
        _ => None,
    }
}

#[async_trait]
impl ApprovalBroker for CliBroker {
    async fn request(&self, req: ApprovalRequest) -> ApprovalOutcome {
        let _turn = self.asking.lock().await;
        // One person at a terminal cannot be two (fail closed).
        if req.route.as_ref().is_some_and(|r| r.required_for(req.risk) > 1) {
            return ApprovalOutcome::Unavailable {
                why: "this request needs two different approvers (approvals_required = 2); decide it from the ops room, not the terminal".into(),
            };
        }
        let deadline = self.store.now_ms() + req.timeout_secs as i64 * 1000;
        let here =
            switchboard_core::ChatAddress::new("cli", req.origin.as_ref().map(|o| o.chat.clone()).unwrap_or_default());
        if let Err(e) = crate::approvals::store_request(
            &self.store,
            &req,
            &here,
            std::slice::from_ref(&self.user),
            (deadline, 1),
        )
        .await
        {
            // Fail closed: an approval that cannot be audited is not asked.
            tracing::error!(error = %e, "cannot store approval request");
            return ApprovalOutcome::Unavailable {
                why: "the approval could not be recorded".into(),
            };
        }
        let prompt = crate::approvals::prompt_of(&req, deadline, 1);
        let (tx, rx) = oneshot::channel();
        *self.pending.lock() = Some(Pending { id: req.id.clone(), tx });
        println!(
            "{}\nAllow? [y] once / [a] always (this run) / [n] deny",
            crate::cli::chat::text::clean(&prompt.render_text())
        );
        let answer = tokio::time::timeout(Duration::from_secs(req.timeout_secs), rx).await;
        self.pending.lock().take();
        let (status, outcome, reason) = self.outcome_of(answer, &req);
        let by = matches!(
            outcome,
            ApprovalOutcome::Approved { .. } | ApprovalOutcome::Denied { .. }
        )
        .then_some(self.user.as_str());
        if let Err(e) = self
            .store
            .approvals()
            .decide(
                &req.id,
                &ApprovalEnd {
                    status,
                    by,
                    from: Some("cli"),
                    reason: reason.as_deref(),
                },
            )
            .await
        {
            tracing::error!(error = %e, "cannot store approval decision");
        }
        outcome
    }
}

impl CliBroker {
    /// What the terminal's answer (or its absence within the request's
    /// timeout) makes of `req`: the status recorded, the outcome the run
    /// gets, and the reason given with a denial.
    fn outcome_of(
        &self,
        answer: Result<Result<Answer, oneshot::error::RecvError>, tokio::time::error::Elapsed>,
        req: &ApprovalRequest,
    ) -> (ApprovalStatus, ApprovalOutcome, Option<String>) {
        match answer {
            Ok(Ok(Answer::Allow { always })) => (
                if always {
                    ApprovalStatus::ApprovedAlways
                } else {
                    ApprovalStatus::Approved
                },
                ApprovalOutcome::Approved {
                    by: self.user.clone(),
                    always,
                },
                None,
            ),
            Ok(Ok(Answer::Deny { reason })) => (
                ApprovalStatus::Denied,
                ApprovalOutcome::Denied {
                    by: self.user.clone(),
                    reason: reason.clone(),
                },
                reason,
            ),
            Ok(Err(_)) => (
                ApprovalStatus::Unavailable,
                ApprovalOutcome::Unavailable {
                    why: "the terminal closed before an answer".into(),
                },
                None,
            ),
            Err(_) => {
                println!("Approval {} expired after {}s.", req.id, req.timeout_secs);
                (
                    ApprovalStatus::Expired,
                    ApprovalOutcome::TimedOut {
                        after_secs: req.timeout_secs,
                    },
                    None,
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_answers_and_the_catalog_commands_decide_the_waiting_request() {
        assert_eq!(parse_answer("y", "ab12"), Some(Answer::Allow { always: false }));
        assert_eq!(parse_answer("Always", "ab12"), Some(Answer::Allow { always: true }));
        assert_eq!(
            parse_answer("/approve ab12 always", "ab12"),
            Some(Answer::Allow { always: true })
        );
        assert_eq!(
            parse_answer("/deny ab12 not on prod", "ab12"),
            Some(Answer::Deny {
                reason: Some("not on prod".into())
            })
        );
        assert_eq!(parse_answer("/approve zz99", "ab12"), None, "another request");
        assert_eq!(parse_answer("/help", "ab12"), None);
        assert_eq!(parse_answer("what is this?", "ab12"), None);
    }
}
