//! The route broker: where a prompt goes, who may answer, and how long it
//! waits. A request that cannot reach a person is refused as unavailable,
//! never as "denied".

use crate::channels::ChannelSet;
use async_trait::async_trait;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use switchboard_config::OnNoApprover;
use switchboard_core::{ApprovalChoice, ApprovalPrompt, ChatAddress, MessageRef, PromptEdit, PromptState, UserId};
use switchboard_runtime::{ApprovalBroker, ApprovalOutcome, ApprovalRequest};
use switchboard_store::{ApprovalEnd, ApprovalStatus, Store, now_ms};
use tokio::sync::oneshot;
use told::{decided, decision_of, no_longer_pending, status_of};
pub(crate) use told::{refusal, removed_approver};

mod posting;
mod tally;
mod told;

pub(super) struct Decision {
    pub(super) choice: ApprovalChoice,
    pub(super) by: String,
    pub(super) reason: Option<String>,
}

struct Pending {
    approvers: Vec<String>,
    /// How many different people must allow it.
    required: u32,
    /// Asked of the person who wrote (no route named approvers).
    inherited: bool,
    /// The risk profile whose route it went by.
    profile: String,
    tx: oneshot::Sender<Decision>,
}

/// Where a prompt goes and who may answer it.
struct Target {
    address: ChatAddress,
    approvers: Vec<String>,
    /// How many different people must allow it.
    required: u32,
    /// Asked of the person who wrote (no route named approvers).
    inherited: bool,
}

/// Carries approval prompts to the ops rooms named by `approval_route`s
/// and settles them with the approvers' decisions (docs/approvals.md).
pub struct RouteBroker {
    config: crate::live_config::LiveConfig,
    store: Store,
    channels: ChannelSet,
    pending: Mutex<HashMap<String, Pending>>,
}

/// One person's answer to a request: who (as the platform proved), where
/// they answered, and what they chose.
pub struct Ballot<'a> {
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
    pub fn new(user: &'a UserId, from: &'a ChatAddress, choice: ApprovalChoice) -> Self {
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

impl RouteBroker {
    /// A broker posting prompts through `channels`.
    pub fn new(config: impl Into<crate::live_config::LiveConfig>, store: Store, channels: ChannelSet) -> Self {
        Self {
            config: config.into(),
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
                let chat = self.config.get().channels.resolve_room(&channel, &recipient);
                return Ok(Target {
                    address: ChatAddress::new(channel, chat),
                    approvers: route.approvers.clone(),
                    required: route.required_for(req.risk),
                    inherited: false,
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
        if route.required_for(req.risk) > 1 {
            return Err(format!(
                "{why}; this request needs two different approvers, and the person who wrote is one"
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
        let inherited = route.approvers.is_empty();
        let approvers = if inherited {
            vec![requester]
        } else {
            route.approvers.clone()
        };
        Ok(Target {
            address: origin,
            approvers,
            required: 1,
            inherited,
        })
    }

    /// A person answered `/approve` or `/deny` (or pressed a button).
    /// Returns what to tell them. The decision is recorded first, by one
    /// conditional write (of two gateways deciding at once exactly one
    /// wins); only then is the waiting tool call woken — here, or on the
    /// gateway it waits on — and the person told.
    pub async fn decide(&self, id: &str, ballot: Ballot<'_>) -> String {
        let Ballot {
            user,
            from,
            choice,
            reason,
        } = ballot;
        let config = self.config.get();
        let waiting_here = self
            .pending
            .lock()
            .get(id)
            .map(|p| (p.approvers.clone(), p.required, p.inherited, Some(p.profile.clone())));
        let (approvers, required, inherited, profile) = match waiting_here {
            Some(known) => known,
            None => match self.store.approvals().get(id).await {
                Ok(Some(row)) if row.status == ApprovalStatus::Pending => (
                    crate::rights::approvers_of(&row),
                    u32::try_from(row.approvals_required).unwrap_or(2),
                    crate::rights::asked_of_originator(&config, &row),
                    config.agents.get(&row.agent).map(|a| a.risk_profile.clone()),
                ),
                // Decided, expired or cancelled already: say which.
                Ok(Some(row)) => return no_longer_pending(&row),
                _ => return format!("No approval request '{id}' is waiting."),
            },
        };
        if let Some(refusal) = refusal("approval", id, user, from, &approvers) {
            return refusal;
        }
        // The configuration may have changed since it was asked: someone
        // a reload took off every route decides nothing any more.
        if !inherited
            && let Some(removed) =
                removed_approver(&config, user, profile.as_deref(), &format!("approval {id} was asked"))
        {
            return removed;
        }
        let (mut by, mut choice) = (user.to_string(), choice);
        if choice != ApprovalChoice::Deny && required > 1 {
            let standing = tally::Standing {
                required,
                profile: profile.as_deref(),
            };
            match self.tally(id, user, from, choice, standing).await {
                tally::Tally::Wait(text) => return text,
                tally::Tally::Enough { by: all, choice: c } => (by, choice) = (all, c),
            }
        }
        let from_text = from.to_string();
        let end = ApprovalEnd {
            status: status_of(choice),
            by: Some(&by),
            from: Some(&from_text),
            reason: reason.as_deref(),
        };
        match self.store.approvals().decide(id, &end).await {
            Ok(true) => {}
            Ok(false) => {
                return match self.store.approvals().get(id).await {
                    Ok(Some(row)) => no_longer_pending(&row),
                    _ => format!("No approval request '{id}' is waiting."),
                };
            }
            Err(e) => {
                tracing::error!(approval = id, error = %e, "cannot record an approval decision");
                return format!("Approval {id} could not be decided right now; try again.");
            }
        }
        let decision = Decision { choice, by, reason };
        // Waiting here: woken now. Waiting on another gateway: it sees the
        // row (and the signal) and runs the tool.
        let waiting = self.pending.lock().remove(id);
        if let Some(p) = waiting {
            let _ = p.tx.send(decision);
        }
        self.store.signal().await;
        decided(id, choice)
    }

    /// Requests waiting here that another gateway decided (in the control
    /// plane): hand each decision to its waiting tool call.
    pub(crate) async fn collect_remote_decisions(&self) {
        let waiting: Vec<String> = self.pending.lock().keys().cloned().collect();
        for id in waiting {
            let row = match self.store.approvals().get(&id).await {
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
    /// Woken by signals (see the store's `signals`), never on a timer of
    /// its own; reads only while requests wait here.
    pub(crate) fn spawn_remote_decisions(self: Arc<Self>) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            loop {
                let signalled = self.store.signalled();
                if !self.pending.lock().is_empty() {
                    self.collect_remote_decisions().await;
                }
                self.store.sleep_until(signalled, None).await;
            }
        })
    }

    async fn record(&self, id: &str, end: ApprovalEnd<'_>) {
        if let Err(e) = self.store.approvals().decide(id, &end).await {
            tracing::error!(approval = id, error = %e, "cannot store an approval decision");
        }
    }

    async fn edit_prompt(&self, channel: &str, message: &MessageRef, prompt: &ApprovalPrompt, state: &PromptState) {
        super::edit_prompt(&self.channels, channel, &PromptEdit { message, prompt, state }).await;
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
        let channel = self.broker.channels.get(&self.channel);
        let (id, message, prompt) = (self.id.clone(), self.message.clone(), self.prompt.clone());
        tokio::spawn(async move {
            if let Err(e) = store
                .approvals()
                .decide(
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
    async fn tell(&self, route: &switchboard_config::ApprovalRoute, text: &str) {
        super::notice::tell(&self.config.get(), &self.channels, route, text).await;
    }

    async fn request(&self, req: ApprovalRequest) -> ApprovalOutcome {
        let target = match self.target(&req) {
            Ok(t) => t,
            Err(why) => return ApprovalOutcome::Unavailable { why },
        };
        let timeout = req.timeout_secs.max(1);
        let deadline = self.store.now_ms() + timeout as i64 * 1000;
        let asked = (deadline, target.required);
        if let Err(e) = super::store_request(&self.store, &req, &target.address, &target.approvers, asked).await {
            tracing::error!(error = %e, "cannot store an approval request");
            return ApprovalOutcome::Unavailable {
                why: "the approval request could not be recorded".into(),
            };
        }
        let prompt = super::prompt_of(&req, deadline, target.required);
        let (tx, rx) = oneshot::channel();
        self.pending.lock().insert(
            req.id.clone(),
            Pending {
                approvers: target.approvers.clone(),
                required: target.required,
                inherited: target.inherited,
                profile: req.profile_name.clone(),
                tx,
            },
        );
        let message = match self.post_prompt(&target.address, &prompt).await {
            Ok(m) => m,
            Err(e) => {
                self.pending.lock().remove(&req.id);
                let why = format!("the approver channel did not accept the prompt ({e})");
                self.record(&req.id, ApprovalEnd::unattended(ApprovalStatus::Unavailable, &why))
                    .await;
                return ApprovalOutcome::Unavailable { why };
            }
        };
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
        if let Err(e) = self.store.approvals().set_prompt(&req.id, &message.id).await {
            tracing::warn!(error = %e, "cannot store the prompt's message id");
        }
        if target.required > 1 {
            // An allow counted while the prompt was still being posted
            // (a quick approver reacts before its buttons are all there)
            // found no message to edit: show it now.
            self.show_early_allows(&req.id, target.required).await;
        }
        let answer = tokio::time::timeout(Duration::from_secs(timeout), rx).await;
        guard.armed = false;
        self.pending.lock().remove(&req.id);
        let channel = target.address.channel.as_str();
        match answer {
            // Recorded already by whoever decided (see `decide`).
            Ok(Ok(d)) => self.act_on(&req.id, channel, &message, &prompt, d).await,
            Ok(Err(_)) => ApprovalOutcome::Unavailable {
                why: "the approval request was dropped".into(),
            },
            Err(_) => self.expire(&req.id, channel, (&message, &prompt), timeout).await,
        }
    }
}

impl RouteBroker {
    /// Request `id` was not answered within `timeout` seconds: it expires
    /// and its prompt says so, unless someone decided it a moment before
    /// the deadline (that decision stands).
    async fn expire(
        &self,
        id: &str,
        channel: &str,
        (message, prompt): (&MessageRef, &ApprovalPrompt),
        timeout: u64,
    ) -> ApprovalOutcome {
        let expired = ApprovalEnd::unattended(ApprovalStatus::Expired, "timed out");
        match self.store.approvals().decide(id, &expired).await {
            Ok(true) => {}
            Ok(false) => {
                let row = self.store.approvals().get(id).await.ok().flatten();
                if let Some(d) = row.and_then(decision_of) {
                    return self.act_on(id, channel, message, prompt, d).await;
                }
            }
            Err(e) => tracing::error!(approval = %id, error = %e, "cannot store an approval decision"),
        }
        self.edit_prompt(channel, message, prompt, &PromptState::Expired).await;
        ApprovalOutcome::TimedOut { after_secs: timeout }
    }

    /// Edit the prompt to say how `d` decided it, and tell the tool call.
    async fn act_on(
        &self,
        id: &str,
        channel: &str,
        message: &MessageRef,
        prompt: &ApprovalPrompt,
        d: Decision,
    ) -> ApprovalOutcome {
        tracing::debug!(approval = id, by = %d.by, "approval decided");
        let state = PromptState::Decided {
            choice: d.choice,
            by: d.by.clone(),
            at_unix: now_ms() / 1000,
        };
        self.edit_prompt(channel, message, prompt, &state).await;
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
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod two_person_tests;
