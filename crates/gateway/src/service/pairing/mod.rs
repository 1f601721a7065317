//! Pairing (docs/routes.md, "Pairing"): where an allow list says
//! `"paired"`, a stranger's direct message gets a code and nothing else,
//! and a request goes to the ops room of the agent that would answer them,
//! with Allow / Deny buttons. An approver's press, `/pair CODE` or the
//! console lets the person in; the decision lives in the control plane, so
//! every gateway admits them at once. Strangers never reach a model.

mod code;
mod manage;

use crate::approvals::{Ballot, Via};
use crate::channels::ChannelSet;
use crate::live_config::LiveConfig;
use switchboard_core::{
    ApprovalChoice, ApprovalPrompt, ChatAddress, Inbound, MessageRef, Outbound, PromptEdit, PromptKind, PromptState,
};
use switchboard_store::{NewPairing, Opened, PairingRow, PairingStatus, Store};

/// How long a code is valid.
pub(crate) const VALID_MS: i64 = 3_600_000;
/// Requests that may wait on one channel at once.
pub(crate) const MAX_PENDING: i64 = 3;
/// After a denial or a revocation, the person gets no new code for this long.
const QUIET_MS: i64 = 24 * 3_600_000;
/// Request ids start with this (buttons carry them).
pub(crate) const ID_PREFIX: &str = "pair-";

/// Lets strangers ask to be let in, and approvers decide.
pub(crate) struct Pairing {
    store: Store,
    config: LiveConfig,
    channels: ChannelSet,
}

/// Where a request goes and who decides it.
struct Deciders {
    approvers: Vec<String>,
    /// The ops room, when the route names a complete one.
    room: Option<ChatAddress>,
}

impl Pairing {
    pub(crate) fn new(runtime: &switchboard_runtime::Runtime, channels: &ChannelSet) -> Self {
        Self {
            store: runtime.store().clone(),
            config: runtime.into(),
            channels: channels.clone(),
        }
    }

    /// The approvers of the agent that would answer `m`, and its ops room.
    fn deciders(&self, m: &Inbound) -> Option<Deciders> {
        let config = self.config.get();
        let agent = crate::routing::pick(&config, m)?.agent;
        let route = config.risk_profile_of(agent)?.approval_route.clone()?;
        if route.approvers.is_empty() {
            return None;
        }
        let room = route.is_complete().then(|| {
            let channel = route.approver_channel.clone().unwrap_or_default();
            let chat = config
                .channels
                .resolve_room(&channel, route.approver_recipient.as_deref().unwrap_or_default());
            ChatAddress::new(channel, chat)
        });
        Some(Deciders {
            approvers: route.approvers,
            room,
        })
    }

    /// A stranger wrote directly where people are let in by pairing: what
    /// to tell them (a code), if anything. Nothing for someone who already
    /// has a code waiting, or was refused lately.
    pub(crate) async fn stranger(&self, m: &Inbound) -> Option<String> {
        let channel = &m.address.channel;
        let now = self.store.now_ms();
        match self.store.pairings().latest(channel, m.sender.as_str()).await {
            Ok(Some(row)) if row.waiting(now) => return None,
            Ok(Some(row))
                if matches!(row.status, PairingStatus::Denied | PairingStatus::Revoked)
                    && row.decided_at.is_some_and(|at| now - at < QUIET_MS) =>
            {
                return None;
            }
            Ok(_) => {}
            Err(e) => {
                tracing::error!(%channel, error = %e, "cannot read pairings; the stranger is not answered");
                return None;
            }
        }
        let Some(deciders) = self.deciders(m) else {
            tracing::warn!(%channel, sender = %m.sender, "a stranger asked to be paired, but the agent answering there has no approvers (approval_route.approvers)");
            return Some(format!(
                "Sorry, {} may not use this bot here, and nobody is set up to let people in.",
                m.sender
            ));
        };
        let code = code::fresh();
        let id = format!("{ID_PREFIX}{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
        let request = NewPairing {
            id: &id,
            channel,
            user_id: m.sender.as_str(),
            display_name: &m.sender_name,
            chat: &m.address.chat,
            code: &code,
            approvers: &deciders.approvers,
            valid_ms: VALID_MS,
            max_pending: MAX_PENDING,
        };
        match self.store.pairings().open(&request).await {
            Ok(Opened::New) => {}
            Ok(Opened::Full) => {
                tracing::warn!(%channel, sender = %m.sender, "pairing request refused: {MAX_PENDING} already wait on this channel");
                return Some(
                    "Sorry, too many people are waiting to be let in here right now. Try again in an hour.".into(),
                );
            }
            Err(e) => {
                tracing::error!(%channel, error = %e, "cannot store a pairing request");
                return None;
            }
        }
        tracing::info!(%channel, sender = %m.sender, pairing = %id, "pairing requested");
        switchboard_telemetry::metrics::message_refused(channel, "pairing");
        if let Some(room) = deciders.room {
            self.post_request(&id, m, &code, room).await;
        }
        Some(format!(
            "You are not on this bot's list yet. Ask an operator to let you in with this code: {code} (valid for one hour)."
        ))
    }

    /// Post request `id` to the ops room, with Allow / Deny.
    async fn post_request(&self, id: &str, m: &Inbound, code: &str, room: ChatAddress) {
        let prompt = request_prompt(
            id,
            &m.address.channel,
            m.sender.as_str(),
            &m.sender_name,
            code,
            self.store.now_ms() + VALID_MS,
        );
        let Some(ch) = self.channels.get(&room.channel) else {
            tracing::warn!(pairing = id, channel = %room.channel, "the approver channel is not running here; the request waits for /pair");
            return;
        };
        match ch.send_approval_prompt(&room, &prompt).await {
            Ok(posted) => {
                if let Err(e) = self
                    .store
                    .pairings()
                    .set_prompt(id, &room.channel, &posted.chat, &posted.id)
                    .await
                {
                    tracing::warn!(pairing = id, error = %e, "cannot store where the pairing request was posted");
                }
            }
            Err(e) => tracing::warn!(pairing = id, error = %e, "cannot post the pairing request; it waits for /pair"),
        }
    }

    /// An approver pressed Allow or Deny (or typed `/approve`/`/deny` with
    /// the request id).
    pub(crate) async fn decide(&self, id: &str, ballot: Ballot<'_>) -> String {
        let row = match self.store.pairings().get(id).await {
            Ok(Some(row)) => row,
            Ok(None) => return format!("No pairing request '{id}' is waiting."),
            Err(e) => {
                tracing::error!(pairing = id, error = %e, "cannot read a pairing request");
                return format!("Pairing request {id} could not be read right now; try again.");
            }
        };
        self.settle(row, ballot).await
    }

    /// Decide `row` as `ballot` says, if its author may.
    async fn settle(&self, row: PairingRow, ballot: Ballot<'_>) -> String {
        let (id, user) = (row.id.clone(), ballot.user);
        if let Via::Chat(from) = ballot.from
            && !user.belongs_to(&from.channel)
        {
            return format!(
                "{user} cannot decide pairing {id} from {}: the id belongs to another platform.",
                from.channel
            );
        }
        if !crate::rights::may_decide(user, &row.approvers) {
            return format!("{user} may not decide pairing {id}: only its approvers can. The request stays open.");
        }
        let status = match ballot.choice {
            ApprovalChoice::Deny => PairingStatus::Denied,
            _ => PairingStatus::Paired,
        };
        let from = ballot.from.to_string();
        match self.store.pairings().decide(&id, status, user.as_str(), &from).await {
            Ok(true) => {}
            Ok(false) => return no_longer_waiting(&row, self.store.now_ms()),
            Err(e) => {
                tracing::error!(pairing = %id, error = %e, "cannot record a pairing decision");
                return format!("Pairing request {id} could not be decided right now; try again.");
            }
        }
        tracing::info!(pairing = %id, person = %row.user_id, channel = %row.channel, by = %user, %status, "pairing decided");
        self.close_prompt(&row, ballot.choice, user.as_str()).await;
        let (told, answer) = if status == PairingStatus::Paired {
            (
                "An operator let you in: you can talk to me now.",
                format!(
                    "{} ({}) may talk to the bot on {} now.",
                    row.user_id, row.display_name, row.channel
                ),
            )
        } else {
            (
                "Sorry, an operator declined your request to use this bot.",
                format!(
                    "{} ({}) was not let in on {}.",
                    row.user_id, row.display_name, row.channel
                ),
            )
        };
        // Told once: a refused person's later messages are dropped quietly.
        let out = Outbound::new(ChatAddress::new(row.channel.clone(), row.chat.clone()), told);
        crate::service::reply::deliver(&self.channels, &self.store, &out, 3).await;
        answer
    }

    /// Edit the request's prompt to say how it ended.
    async fn close_prompt(&self, row: &PairingRow, choice: ApprovalChoice, by: &str) {
        let (Some(channel), Some(chat), Some(message)) = (&row.prompt_channel, &row.prompt_chat, &row.prompt_message)
        else {
            return;
        };
        let Some(ch) = self.channels.get(channel) else { return };
        let prompt = request_prompt(
            &row.id,
            &row.channel,
            &row.user_id,
            &row.display_name,
            &row.code,
            row.expires_at,
        );
        let at = MessageRef {
            chat: chat.clone(),
            id: message.clone(),
        };
        let state = PromptState::Decided {
            choice,
            by: by.to_string(),
            at_unix: self.store.now_ms() / 1000,
        };
        if let Err(e) = ch
            .update_approval_prompt(&PromptEdit {
                message: &at,
                prompt: &prompt,
                state: &state,
            })
            .await
        {
            tracing::warn!(pairing = %row.id, error = %e, "cannot edit the pairing request");
        }
    }
}

/// The ops-room prompt of a pairing request (the code rides in `tool`).
fn request_prompt(id: &str, channel: &str, user: &str, name: &str, code: &str, expires_ms: i64) -> ApprovalPrompt {
    ApprovalPrompt {
        id: id.to_string(),
        agent: String::new(),
        caller_chain: Vec::new(),
        tool: code.to_string(),
        summary: format!("{user} ({}) asks to talk to the bot on {channel}.", one_line(name)),
        risk: String::new(),
        deadline_unix: expires_ms / 1000,
        kind: PromptKind::Pairing,
        approvals_required: 1,
    }
}

/// A display name on one line, at most 64 characters (it is the
/// stranger's own text).
fn one_line(name: &str) -> String {
    name.chars().filter(|c| !c.is_control()).take(64).collect()
}

/// Why a request can no longer be decided.
fn no_longer_waiting(row: &PairingRow, now: i64) -> String {
    if row.status == PairingStatus::Pending && row.expires_at <= now {
        return format!("Pairing request {} expired: its code was valid for one hour.", row.id);
    }
    match &row.decided_by {
        Some(by) => format!(
            "Pairing request {} is no longer waiting: {} by {by}.",
            row.id, row.status
        ),
        None => format!("Pairing request {} is no longer waiting: {}.", row.id, row.status),
    }
}
