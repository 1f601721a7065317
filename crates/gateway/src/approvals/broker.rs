//! The route broker: where a prompt goes, who may answer, and how long it
//! waits. A request that cannot reach a person is refused as unavailable,
//! never as "denied".

use crate::channels::ChannelSet;
use async_trait::async_trait;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use switchboard_config::{Config, OnNoApprover};
use switchboard_core::{ApprovalChoice, ApprovalPrompt, ChatAddress, MessageRef, PromptEdit, PromptState, UserId};
use switchboard_runtime::{ApprovalBroker, ApprovalOutcome, ApprovalRequest};
use switchboard_store::{ApprovalEnd, ApprovalRow, ApprovalStatus, Store, now_ms};
use tokio::sync::oneshot;

struct Decision {
    choice: ApprovalChoice,
    by: String,
    from: String,
    reason: Option<String>,
}

struct Pending {
    approvers: Vec<String>,
    tx: oneshot::Sender<Decision>,
}

/// Where a prompt goes and who may answer it.
struct Target {
    address: ChatAddress,
    approvers: Vec<String>,
}

pub(crate) struct RouteBroker {
    config: Arc<Config>,
    store: Store,
    channels: ChannelSet,
    pending: Mutex<HashMap<String, Pending>>,
}

/// One person's answer to a request: who (as the platform proved), where
/// they answered, and what they chose.
pub(crate) struct Ballot<'a> {
    /// The person.
    pub(crate) user: &'a UserId,
    /// Where the answer came from.
    pub(crate) from: Via<'a>,
    /// What they chose.
    pub(crate) choice: ApprovalChoice,
    /// Why, for a denial.
    pub(crate) reason: Option<String>,
}

impl<'a> Ballot<'a> {
    /// An answer without a reason.
    pub(crate) fn new(user: &'a UserId, from: &'a ChatAddress, choice: ApprovalChoice) -> Self {
        Self {
            user,
            from: Via::Chat(from),
            choice,
            reason: None,
        }
    }

    /// An answer given in the operator console by a signed-in person.
    pub(crate) fn from_console(user: &'a UserId, choice: ApprovalChoice) -> Self {
        Self {
            user,
            from: Via::Console,
            choice,
            reason: None,
        }
    }
}

/// Where an answer was given.
#[derive(Clone, Copy)]
pub(crate) enum Via<'a> {
    /// A chat: its platform must vouch for the person's id.
    Chat(&'a ChatAddress),
    /// The operator console: the person signed in with a link their
    /// platform delivered to them (docs/console.md).
    Console,
}

impl std::fmt::Display for Via<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Via::Chat(address) => address.fmt(f),
            Via::Console => f.write_str("console"),
        }
    }
}

/// How often requests waiting here look for decisions made on another
/// gateway.
const REMOTE_POLL: Duration = Duration::from_millis(100);

/// Why `user` may not decide request `id` from `from`, if they may not. An
/// approver is recognised only on the platform that vouches for their id:
/// `tg:7` typed into a local chat is not tg:7.
fn refusal(id: &str, user: &UserId, from: Via<'_>, approvers: &[String]) -> Option<String> {
    if let Via::Chat(from) = from
        && !user.belongs_to(&from.channel)
    {
        return Some(format!(
            "{user} cannot decide approval {id} from {}: decisions count only from the platform that id belongs to. The request stays open.",
            from.channel
        ));
    }
    if !crate::rights::may_decide(user, approvers) {
        return Some(format!(
            "{user} may not decide approval {id}: only its approvers can. The request stays open."
        ));
    }
    None
}

/// What the person who decided is told.
fn decided(id: &str, choice: ApprovalChoice) -> String {
    match choice {
        ApprovalChoice::AllowOnce => format!("Approval {id}: allowed once."),
        ApprovalChoice::Always => format!("Approval {id}: allowed for the rest of this run."),
        ApprovalChoice::Deny => format!("Approval {id}: denied."),
    }
}

/// The decision a decided row records; `None` for one that ended
/// otherwise (expired, cancelled, unavailable).
fn decision_of(row: ApprovalRow) -> Option<Decision> {
    let choice = match row.status {
        ApprovalStatus::Approved => ApprovalChoice::AllowOnce,
        ApprovalStatus::ApprovedAlways => ApprovalChoice::Always,
        ApprovalStatus::Denied => ApprovalChoice::Deny,
        _ => return None,
    };
    Some(Decision {
        choice,
        by: row.decided_by.unwrap_or_default(),
        from: row.decided_from.unwrap_or_default(),
        reason: row.reason,
    })
}

/// The stored status of a choice.
fn status_of(choice: ApprovalChoice) -> ApprovalStatus {
    match choice {
        ApprovalChoice::AllowOnce => ApprovalStatus::Approved,
        ApprovalChoice::Always => ApprovalStatus::ApprovedAlways,
        ApprovalChoice::Deny => ApprovalStatus::Denied,
    }
}

impl RouteBroker {
    pub(crate) fn new(config: Arc<Config>, store: Store, channels: ChannelSet) -> Self {
        Self {
            config,
            store,
            channels,
            pending: Mutex::new(HashMap::new()),
        }
    }

    /// Choose the prompt's destination, or say why nobody can be asked.
    fn target(&self, req: &ApprovalRequest) -> Result<Target, String> {
        let route = req.route.clone().unwrap_or_default();
        if route.is_complete() {
            let channel = route.approver_channel.clone().unwrap_or_default();
            if self.channels.get(&channel).is_some() {
                let recipient = route.approver_recipient.clone().unwrap_or_default();
                let chat = self.config.channels.resolve_room(&channel, &recipient);
                return Ok(Target {
                    address: ChatAddress::new(channel, chat),
                    approvers: route.approvers.clone(),
                });
            }
            return self.fallback(req, &route, format!("approver channel '{channel}' is not running"));
        }
        self.fallback(req, &route, "no complete approval_route is configured".into())
    }

    fn fallback(
        &self,
        req: &ApprovalRequest,
        route: &switchboard_config::ApprovalRoute,
        why: String,
    ) -> Result<Target, String> {
        if route.on_no_approver != OnNoApprover::InheritOriginator {
            return Err(format!(
                "{why}; [risk_profiles.{}.approval_route].on_no_approver = \"deny\"",
                req.profile_name
            ));
        }
        if !req.originator_may_decide {
            return Err(format!("{why}; an independent delegate has no originating chat to ask"));
        }
        let (Some(origin), Some(requester)) = (req.origin.clone(), req.requested_by.clone()) else {
            return Err(format!("{why}; this run has no originating chat"));
        };
        if self.channels.get(&origin.channel).is_none() {
            return Err(format!("{why}; the originating channel is not running"));
        }
        let approvers = if route.approvers.is_empty() {
            vec![requester]
        } else {
            route.approvers.clone()
        };
        Ok(Target {
            address: origin,
            approvers,
        })
    }

    /// A person answered `/approve` or `/deny` (or pressed a button).
    /// Returns what to tell them.
    pub(crate) async fn decide(&self, id: &str, ballot: Ballot<'_>) -> String {
        let (user, from, choice, reason) = (ballot.user, ballot.from, ballot.choice, ballot.reason.clone());
        if let Some(answer) = self.decide_waiting(id, ballot) {
            return answer;
        }
        match self.store.approval(id).await {
            // Waiting on another gateway of the cluster: decided here, in
            // the control plane; that gateway sees it and runs the tool.
            Ok(Some(row)) if row.status == ApprovalStatus::Pending => {
                let approvers = crate::rights::approvers_of(&row);
                if let Some(refusal) = refusal(id, user, from, &approvers) {
                    return refusal;
                }
                let from_text = from.to_string();
                let end = ApprovalEnd {
                    status: status_of(choice),
                    by: Some(user.as_str()),
                    from: Some(&from_text),
                    reason: reason.as_deref(),
                };
                match self.store.decide_approval(id, &end).await {
                    Ok(true) => {
                        self.store.signal().await;
                        decided(id, choice)
                    }
                    Ok(false) => format!("Approval {id} was decided a moment ago by someone else."),
                    Err(e) => {
                        tracing::error!(approval = id, error = %e, "cannot store a decision for another instance");
                        format!("Approval {id} could not be decided right now; try again.")
                    }
                }
            }
            // Decided, expired or cancelled already: say which.
            Ok(Some(row)) => format!("Approval {id} is no longer pending: it was {}.", row.status),
            _ => format!("No approval request '{id}' is waiting."),
        }
    }

    /// Requests waiting here that another gateway decided (in the control
    /// plane): hand each decision to its waiting tool call.
    pub(crate) async fn collect_remote_decisions(&self) {
        let waiting: Vec<String> = self.pending.lock().keys().cloned().collect();
        for id in waiting {
            let row = match self.store.approval(&id).await {
                Ok(Some(row)) if row.status != ApprovalStatus::Pending => row,
                _ => continue,
            };
            // Expired or cancelled elsewhere: the local timeout ends it.
            let Some(decision) = decision_of(row) else {
                continue;
            };
            let Some(p) = self.pending.lock().remove(&id) else {
                continue;
            };
            let _ = p.tx.send(decision);
        }
    }

    /// Watch for decisions made on other gateways while requests wait here.
    pub(crate) fn spawn_remote_decisions(self: Arc<Self>) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            loop {
                let signalled = self.store.signalled();
                tokio::select! {
                    () = signalled => {}
                    () = tokio::time::sleep(REMOTE_POLL) => {}
                }
                if !self.pending.lock().is_empty() {
                    self.collect_remote_decisions().await;
                }
            }
        })
    }

    /// `decide` for a request waiting in this process, under one look at
    /// the pending table; `None` when it is not waiting here.
    fn decide_waiting(&self, id: &str, ballot: Ballot<'_>) -> Option<String> {
        let Ballot {
            user,
            from,
            choice,
            reason,
        } = ballot;
        let mut pending = self.pending.lock();
        let p = pending.get(id)?;
        if let Some(refusal) = refusal(id, user, from, &p.approvers) {
            return Some(refusal);
        }
        let p = pending.remove(id).expect("checked above");
        let _ = p.tx.send(Decision {
            choice,
            by: user.to_string(),
            from: from.to_string(),
            reason,
        });
        Some(decided(id, choice))
    }

    /// Record decision `d` of request `id` — one conditional write, so of
    /// two gateways deciding at once exactly one wins — and return the
    /// decision that stands: `d`, or the one recorded first elsewhere.
    /// `None` when none does (closed elsewhere, or the store cannot say):
    /// the tool is not run.
    async fn settle(&self, id: &str, d: Decision) -> Option<Decision> {
        let end = ApprovalEnd {
            status: status_of(d.choice),
            by: Some(&d.by),
            from: Some(&d.from),
            reason: d.reason.as_deref(),
        };
        match self.store.decide_approval(id, &end).await {
            Ok(true) => Some(d),
            Ok(false) => {
                let row = self.store.approval(id).await.ok().flatten()?;
                let stands = decision_of(row);
                tracing::warn!(
                    approval = id,
                    lost = %d.by,
                    stands = stands.as_ref().map_or("nobody", |s| s.by.as_str()),
                    "two decisions of one request; the one recorded first stands"
                );
                stands
            }
            Err(e) => {
                tracing::error!(approval = id, error = %e, "cannot record an approval decision; the tool is not run");
                None
            }
        }
    }

    async fn record(&self, id: &str, end: ApprovalEnd<'_>) {
        if let Err(e) = self.store.decide_approval(id, &end).await {
            tracing::error!(approval = id, error = %e, "cannot store an approval decision");
        }
    }

    async fn edit_prompt(&self, channel: &str, message: &MessageRef, prompt: &ApprovalPrompt, state: &PromptState) {
        if let Some(ch) = self.channels.get(channel)
            && let Err(e) = ch.update_approval_prompt(&PromptEdit { message, prompt, state }).await
        {
            tracing::warn!(approval = %prompt.id, error = %e, "cannot edit the approval prompt");
        }
    }
}

/// Closes a request whose waiting run went away before a decision.
struct CancelOnDrop<'a> {
    broker: &'a RouteBroker,
    id: String,
    channel: String,
    message: MessageRef,
    prompt: ApprovalPrompt,
    armed: bool,
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        self.broker.pending.lock().remove(&self.id);
        let store = self.broker.store.clone();
        let channel = self.broker.channels.get(&self.channel).cloned();
        let (id, message, prompt) = (self.id.clone(), self.message.clone(), self.prompt.clone());
        tokio::spawn(async move {
            if let Err(e) = store
                .decide_approval(
                    &id,
                    &ApprovalEnd::unattended(ApprovalStatus::Cancelled, "the run that asked was stopped"),
                )
                .await
            {
                tracing::error!(approval = %id, error = %e, "cannot record a cancelled approval request");
            }
            if let Some(ch) = channel
                && let Err(e) = ch
                    .update_approval_prompt(&PromptEdit {
                        message: &message,
                        prompt: &prompt,
                        state: &PromptState::Cancelled,
                    })
                    .await
            {
                tracing::warn!(approval = %id, error = %e, "cannot edit the approval prompt");
            }
        });
    }
}

#[async_trait]
impl ApprovalBroker for RouteBroker {
    async fn request(&self, req: ApprovalRequest) -> ApprovalOutcome {
        let target = match self.target(&req) {
            Ok(t) => t,
            Err(why) => return ApprovalOutcome::Unavailable { why },
        };
        let timeout = req.timeout_secs.max(1);
        let deadline = self.store.now_ms() + timeout as i64 * 1000;
        if let Err(e) = super::store_request(&self.store, &req, &target.address, &target.approvers, deadline).await {
            tracing::error!(error = %e, "cannot store an approval request");
            return ApprovalOutcome::Unavailable {
                why: "the approval request could not be recorded".into(),
            };
        }
        let prompt = super::prompt_of(&req, deadline);
        let (tx, rx) = oneshot::channel();
        self.pending.lock().insert(
            req.id.clone(),
            Pending {
                approvers: target.approvers.clone(),
                tx,
            },
        );
        let channel = self.channels.get(&target.address.channel).cloned();
        let sent = match channel {
            Some(ch) => ch.send_approval_prompt(&target.address, &prompt).await,
            None => Err(switchboard_core::ChannelError::Permanent("channel vanished".into())),
        };
        let message = match sent {
            Ok(m) => m,
            Err(e) => {
                self.pending.lock().remove(&req.id);
                let why = format!("the approver channel did not accept the prompt ({e})");
                self.record(&req.id, ApprovalEnd::unattended(ApprovalStatus::Unavailable, &why))
                    .await;
                return ApprovalOutcome::Unavailable { why };
            }
        };
        if let Err(e) = self.store.set_approval_prompt(&req.id, &message.id).await {
            tracing::warn!(error = %e, "cannot store the prompt's message id");
        }
        // If the run stops while waiting (this future is dropped), the
        // request is closed as cancelled and its prompt says so.
        let mut guard = CancelOnDrop {
            broker: self,
            id: req.id.clone(),
            channel: target.address.channel.clone(),
            message: message.clone(),
            prompt: prompt.clone(),
            armed: true,
        };
        let answer = tokio::time::timeout(Duration::from_secs(timeout), rx).await;
        guard.armed = false;
        self.pending.lock().remove(&req.id);
        let channel = target.address.channel.as_str();
        match answer {
            Ok(Ok(d)) => {
                let Some(d) = self.settle(&req.id, d).await else {
                    return ApprovalOutcome::Unavailable {
                        why: "the request was closed elsewhere before a decision was recorded".into(),
                    };
                };
                let state = PromptState::Decided {
                    choice: d.choice,
                    by: d.by.clone(),
                    at_unix: now_ms() / 1000,
                };
                self.edit_prompt(channel, &message, &prompt, &state).await;
                match d.choice {
                    ApprovalChoice::Deny => ApprovalOutcome::Denied {
                        by: d.by,
                        reason: d.reason,
                    },
                    c => ApprovalOutcome::Approved {
                        by: d.by,
                        always: c == ApprovalChoice::Always,
                    },
                }
            }
            Ok(Err(_)) => ApprovalOutcome::Unavailable {
                why: "the approval request was dropped".into(),
            },
            Err(_) => {
                self.record(&req.id, ApprovalEnd::unattended(ApprovalStatus::Expired, "timed out"))
                    .await;
                self.edit_prompt(channel, &message, &prompt, &PromptState::Expired)
                    .await;
                ApprovalOutcome::TimedOut { after_secs: timeout }
            }
        }
    }
}

#[cfg(test)]
mod tests;
