//! Pairing (docs/routes.md, "Pairing"): where an allow list says
//! `"paired"`, a stranger's direct message gets a code and nothing else,
//! and a request goes to the ops room of the agent that would answer them,
//! with Allow / Deny buttons. An approver's press, `/pair CODE` or the
//! console lets the person in; the decision lives in the control plane, so
//! every gateway admits them at once. Strangers never reach a model.

mod code;
mod manage;

use super::taken::Taken;
use crate::approvals::Ballot;
use crate::channels::ChannelSet;
use crate::commands::Command;
use crate::live_config::LiveConfig;
use switchboard_config::Picked;
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
    /// Requests are opened one at a time, so that the limits (one per
    /// person, `MAX_PENDING` per channel) hold on every database. A
    /// channel's messages are taken by one gateway at a time.
    opening: tokio::sync::Mutex<()>,
}

/// Where a request goes and who decides it.
struct Deciders {
    /// The agent the person would talk to.
    agent: String,
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
            opening: tokio::sync::Mutex::new(()),
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
            agent: agent.to_string(),
            approvers: route.approvers,
            room,
        })
    }

    /// A stranger wrote directly where people are let in by pairing: what
    /// to tell them (a code), if anything. Nothing for someone who already
    /// has a code waiting, or was refused lately.
    pub(crate) async fn stranger(&self, m: &Inbound) -> Option<String> {
        let channel = &m.address.channel;
        let _one_at_a_time = self.opening.lock().await;
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
        let name = clean_name(&m.sender_name);
        let request = NewPairing {
            id: &id,
            channel,
            agent: &deciders.agent,
            user_id: m.sender.as_str(),
            display_name: &name,
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
            let asked = Asked {
                id: &id,
                channel,
                user: m.sender.as_str(),
                name: &name,
                code: &code,
            };
            self.post_request(&asked, room).await;
        }
        Some(format!(
            "You are not on this bot's list yet. Ask an operator to let you in with this code: {code} (valid for one hour)."
        ))
    }

    /// Post request `a` to the ops room, with Allow / Deny.
    async fn post_request(&self, a: &Asked<'_>, room: ChatAddress) {
        let id = a.id;
        let prompt = request_prompt(a, self.store.now_ms() + VALID_MS);
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
        if let Some(refusal) = crate::approvals::refusal("pairing", &id, user, ballot.from, &row.approvers) {
            return refusal;
        }
        // The configuration may have changed since it was asked: someone a
        // reload took off the agent's approvers lets nobody in any more.
        let config = self.config.get();
        let profile = config.agents.get(&row.agent).map(|a| a.risk_profile.as_str());
        if let Some(removed) =
            crate::approvals::removed_approver(&config, user, profile, &format!("pairing request {id} was made"))
        {
            return removed;
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
        crate::messages::reply::deliver(&self.channels, &self.store, &out, 3).await;
        answer
    }

    /// Edit the request's prompt to say how it ended.
    async fn close_prompt(&self, row: &PairingRow, choice: ApprovalChoice, by: &str) {
        let (Some(channel), Some(chat), Some(message)) = (&row.prompt_channel, &row.prompt_chat, &row.prompt_message)
        else {
            return;
        };
        let asked = Asked {
            id: &row.id,
            channel: &row.channel,
            user: &row.user_id,
            name: &row.display_name,
            code: &row.code,
        };
        let prompt = request_prompt(&asked, row.expires_at);
        let at = MessageRef {
            chat: chat.clone(),
            id: message.clone(),
        };
        let state = PromptState::Decided {
            choice,
            by: by.to_string(),
            at_unix: self.store.now_ms() / 1000,
        };
        let edit = PromptEdit {
            message: &at,
            prompt: &prompt,
            state: &state,
        };
        crate::approvals::edit_prompt(&self.channels, channel, &edit).await;
    }
}

/// Whether `m`'s sender was let in by pairing to talk to the agent of
/// `route` (the route that takes `m`); `command`: what `m` asks of the
/// gateway, as read when it was taken. Read only where that place's allow
/// list says `"paired"` and does not name them, and only for a message the
/// mention rule would take (chatter costs no read); a store error reads
/// as no (fail closed).
pub(crate) async fn paired_here(
    store: &Store,
    route: Option<&Picked<'_>>,
    (m, command): (&Inbound, Option<&Command>),
) -> bool {
    let Some(route) = route else {
        return false;
    };
    let for_the_bot = m.direct || m.mentioned || !route.require_mention || command.is_some();
    if !for_the_bot
        || !route.allowed_users.iter().any(|u| u == "paired")
        || m.sender.is_listed_in(route.allowed_users)
        || !m.sender.belongs_to(&m.address.channel)
    {
        return false;
    }
    match store
        .pairings()
        .paired(&m.address.channel, m.sender.as_str(), route.agent)
        .await
    {
        Ok(p) => p,
        Err(e) => {
            tracing::error!(channel = %m.address.channel, error = %e, "cannot read pairings; the sender is treated as a stranger");
            false
        }
    }
}

/// Whether the sender of `t` may still be answered where they wrote:
/// named by the allow list there now (no read), or still paired
/// (`paired_here`).
pub(crate) async fn still_admitted(store: &Store, config: &switchboard_config::Config, t: &Taken) -> bool {
    let m = &t.m;
    let route = crate::routing::pick(config, m);
    let channel = &m.address.channel;
    m.sender.belongs_to(channel)
        && (m
            .sender
            .is_listed_in(crate::routing::users_of(config, route.as_ref(), channel))
            || paired_here(store, route.as_ref(), (m, t.command.as_ref())).await)
}

/// A pairing request as its prompt shows it.
struct Asked<'a> {
    id: &'a str,
    channel: &'a str,
    user: &'a str,
    /// Cleaned (`clean_name`).
    name: &'a str,
    code: &'a str,
}

/// The ops-room prompt of a pairing request (the code rides in `tool`).
fn request_prompt(a: &Asked<'_>, expires_ms: i64) -> ApprovalPrompt {
    ApprovalPrompt {
        id: a.id.to_string(),
        agent: String::new(),
        caller_chain: Vec::new(),
        tool: a.code.to_string(),
        summary: format!("{} ({}) asks to talk to the bot on {}.", a.user, a.name, a.channel),
        // Not shown on a pairing prompt; letting a stranger in is weighed as high.
        risk: switchboard_core::Risk::High,
        deadline_unix: expires_ms / 1000,
        kind: PromptKind::Pairing,
        approvals_required: 1,
    }
}

/// A display name as stored and shown: the stranger's own text, so one
/// line of at most 64 characters, without control, bidirectional or
/// invisible formatting characters (nothing in it can move or hide text
/// in the ops room).
pub(crate) fn clean_name(name: &str) -> String {
    let hidden = |c: char| {
        c.is_control()
            || matches!(c, '\u{200B}'..='\u{200F}' | '\u{2028}'..='\u{202E}' | '\u{2060}'..='\u{206F}' | '\u{FEFF}' | '\u{00AD}')
    };
    let clean: String = name.chars().filter(|c| !hidden(*c)).take(64).collect();
    if clean.trim().is_empty() {
        "no name".into()
    } else {
        clean
    }
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
