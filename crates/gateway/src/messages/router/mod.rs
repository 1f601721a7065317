//! The chat router: every message taken into the inbox (see `inbox`) goes
//! either to a slash command or to the session of `(channel, chat,
//! thread)`. Turns of one session run one after another; different sessions
//! run side by side (`session`). Each message is answered once through
//! `reply::answer`, which marks it done in the inbox. Chat input is bounded
//! (`[limits]`): a session's queue, and how long an idle session stays in
//! memory (a person's rate is checked before the inbox).

mod joining;
mod merge;
mod put_back;
mod recovered;
mod session;
mod typing;

use crate::approvals::{Ballot, RouteBroker, Via};
use crate::channels::ChannelSet;
use crate::commands::{self, Command, CommandContext};
use crate::messages::taken::Taken;
use parking_lot::Mutex;
pub(crate) use session::TurnNow;
use session::{Queued, Session};
use std::collections::HashMap;
use std::sync::Arc;
use switchboard_config::Config;
use switchboard_runtime::Runtime;
use tokio::sync::mpsc;

/// The answer to a message that does not fit in its session's queue.
const BUSY: &str =
    "Busy: this conversation already has messages waiting. Try again when the current answer has arrived.";

pub(crate) struct Router {
    runtime: Runtime,
    channels: ChannelSet,
    broker: Arc<RouteBroker>,
    pairing: Arc<crate::messages::pairing::Pairing>,
    sessions: Mutex<HashMap<String, Session>>,
    /// Status reactions of the messages being handled.
    statuses: crate::messages::status_reactions::Statuses,
    /// Turns being handled here, from their start until their answer is
    /// sent (a stop waits for them: `Gateway::stop`).
    in_hand: std::sync::atomic::AtomicUsize,
}

/// The answer to a message on a channel no agent answers on.
fn no_agent(channel: &str) -> String {
    format!("No agent answers on {channel}; add it to an agent's [agents.<alias>].channels.")
}

impl Router {
    pub(crate) fn new(
        runtime: Runtime,
        channels: ChannelSet,
        broker: Arc<RouteBroker>,
        pairing: Arc<crate::messages::pairing::Pairing>,
    ) -> Arc<Self> {
        Arc::new(Self {
            runtime,
            channels,
            broker,
            pairing,
            sessions: Mutex::new(HashMap::new()),
            statuses: Default::default(),
            in_hand: Default::default(),
        })
    }

    /// How many turns are being handled here now (started, answer not
    /// sent yet).
    pub(crate) fn turns_in_hand(&self) -> usize {
        self.in_hand.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Route messages until every channel has hung up.
    /// Messages join their session's queue in the order they came;
    /// commands run side by side.
    pub(crate) async fn run(self: Arc<Self>, mut inbound: mpsc::Receiver<Taken>) {
        while let Some(t) = inbound.recv().await {
            match t.command.clone() {
                None => self.start_turn(t),
                Some(command) => {
                    tokio::spawn(self.clone().command(t, command));
                }
            }
        }
    }

    /// Handle messages found pending at start, one after another in the
    /// order they came.
    pub(crate) async fn resume(self: &Arc<Self>, pending: Vec<Taken>) {
        if !pending.is_empty() {
            tracing::warn!(count = pending.len(), "answering messages taken before the last stop");
        }
        // Every message joins its session's queue before any of them is
        // handled, so a merged burst is grouped again as it was (commands
        // run beside, as they do when they arrive).
        for t in pending {
            match t.command.clone() {
                None => self.start_turn(t),
                Some(command) => {
                    tokio::spawn(self.clone().command(t, command));
                }
            }
        }
    }

    /// Queue a message for its session's turn (answered at once when no
    /// agent answers here or the queue is full).
    fn start_turn(self: &Arc<Self>, t: Taken) {
        let channel = &t.m.address.channel;
        let config = self.runtime.config().clone();
        let Some(agent) = t.agent().map(str::to_string) else {
            let text = no_agent(channel);
            let router = self.clone();
            tokio::spawn(async move { router.answer(&t, text).await });
            return;
        };
        let agent = agent.as_str();
        let session_key = t.m.address.session_key(agent);
        self.statuses.taken(&config, &self.channels, &t);
        let q = Queued {
            t,
            follow_up: None,
            seat: None,
        };
        if let Err(session::Busy(q)) = self.enqueue(agent, session_key, q) {
            tracing::warn!(channel = %q.t.m.address.channel, sender = %q.t.m.sender, "session queue full; message refused");
            self.statuses.ended(&q.t, switchboard_core::MessageStatus::Failed);
            let router = self.clone();
            tokio::spawn(async move { router.answer(&q.t, BUSY.to_string()).await });
        }
    }

    /// Stop the running turns of `who` that they may no longer have (sent
    /// away with `/unpair`); their queued messages are not run either
    /// (see `session`).
    pub(crate) fn stop_turns_of(&self, who: &str, config: &Config) {
        for turn in self.running_turns() {
            let m = switchboard_core::Inbound::new(turn.address.clone(), turn.owner.clone(), "");
            if turn.owner.as_str() == who && !m.sender.is_listed_in(crate::routing::allowed_users(config, &m)) {
                tracing::info!(session = %turn.session_key, person = who, "stopping the turn of a person sent away");
                turn.cancel.cancel();
            }
        }
    }

    /// Pairing, for the console's People page.
    pub(crate) fn pairing(&self) -> &Arc<crate::messages::pairing::Pairing> {
        &self.pairing
    }

    async fn answer(&self, to: &Taken, text: String) {
        crate::messages::reply::answer(&self.channels, self.runtime.store(), to, text).await;
    }

    /// Run a slash command and answer with its outcome.
    async fn command(self: Arc<Self>, t: Taken, command: Command) {
        let config = self.runtime.config().clone();
        let m = &t.m;
        match command {
            Command::Decide { id, choice, reason } => {
                let ballot = Ballot {
                    reason,
                    ..Ballot::new(&m.sender, &m.address, choice)
                };
                let text = if id.starts_with(crate::messages::pairing::ID_PREFIX) {
                    self.pairing.decide(&id, ballot).await
                } else {
                    self.broker.decide(&id, ballot).await
                };
                self.answer(&t, text).await;
            }
            Command::Pair(code) => {
                let text = self.pairing.pair_by_code(&code, &m.sender, Via::Chat(&m.address)).await;
                self.answer(&t, text).await;
            }
            Command::Unpair(who) => {
                let text = self.pairing.unpair(&who, &m.sender, Via::Chat(&m.address)).await;
                if crate::rights::may_admit(&config, &m.sender) {
                    self.stop_turns_of(&who, &config);
                }
                self.answer(&t, text).await;
            }
            Command::People => {
                let text = self.pairing.people(&m.sender, m.direct).await;
                self.answer(&t, text).await;
            }
            Command::Console => {
                // On a local chat anyone on this machine can claim a name,
                // unless the alias knows its people by token.
                let config = self.runtime.config();
                let claimed = switchboard_config::ChannelName::parse(&m.address.channel)
                    .filter(|n| n.kind == switchboard_config::ChannelKind::Local)
                    .and_then(|n| config.channels.local.get(n.alias))
                    .is_some_and(|l| l.people.is_empty());
                let text = if claimed {
                    format!(
                        "Console links are not given in this local chat: anyone on this machine could use the name {}. Set [channels.{}.people] (a token per person), or ask from a chat platform.",
                        m.sender, m.address.channel
                    )
                } else {
                    commands::console_link::SignIn::answer(&self.runtime, &m.sender, m.direct).await
                };
                crate::messages::reply::answer_privately(&self.channels, self.runtime.store(), &t, text).await;
            }
            other => self.agent_command(&t, other).await,
        }
    }

    /// A command answered for the chat's agent (`/status`, `/subagents`,
    /// `/stop`, ...), in the session of the route the message was taken by.
    async fn agent_command(self: &Arc<Self>, t: &Taken, command: Command) {
        let m = &t.m;
        let Some(route) = t.route.clone() else {
            self.answer(t, no_agent(&m.address.channel)).await;
            return;
        };
        let agent = route.agent.as_str();
        let session_key = m.address.session_key(agent);
        let ctx = CommandContext {
            runtime: &self.runtime,
            agent,
            session_key: &session_key,
            address: &m.address,
            sender: &m.sender,
            sent_at: t.received_at,
            route: Some(route.why.clone()),
        };
        let text = match command {
            Command::Subagents(commands::subagents::Sub::Send { target, message }) => {
                match commands::subagents::send::plan(&ctx, &target, &message).await {
                    commands::subagents::send::Plan::Done(text) => text,
                    commands::subagents::send::Plan::FollowUp {
                        agent,
                        session_key,
                        text,
                        prefix,
                    } => {
                        // The message goes to the child's session as a
                        // turn of its own (never read as a command again).
                        let mut follow = t.clone();
                        follow.m.text = text;
                        follow.command = None;
                        let q = Queued {
                            t: follow,
                            follow_up: Some(prefix),
                            seat: None,
                        };
                        if self.enqueue(&agent, session_key, q).is_ok() {
                            return;
                        }
                        BUSY.to_string()
                    }
                }
            }
            Command::Stop => self.stop(&ctx).await,
            cmd => commands::apply(&cmd, &ctx).await,
        };
        self.answer(t, text).await;
    }

    /// `/stop`: an operator (approver) stops the turn and every child of
    /// the session; anyone else only their own turn and the children they
    /// asked for — in a group, one person cannot stop another's work.
    async fn stop(&self, ctx: &CommandContext<'_>) -> String {
        let (session_key, sender) = (ctx.session_key, ctx.sender);
        let operator = ctx.sender_may_operate();
        // The chat's own turn, and follow-ups of finished children asked
        // for from this chat (they run in the children's sessions).
        let turns = self
            .running_turns()
            .into_iter()
            .filter(|t| t.session_key == session_key || t.follow_up.as_deref() == Some(session_key));
        let mut stopped_turn = false;
        let mut refused = None;
        for TurnNow {
            cancel, owner, agent, ..
        } in turns
        {
            if crate::rights::may_stop(&self.runtime.config(), sender, &owner, &agent) {
                cancel.cancel();
                stopped_turn = true;
            } else {
                refused = Some(owner);
            }
        }
        let children = commands::stop_session_children(&self.runtime, session_key, sender, operator).await;
        match (stopped_turn, children, refused) {
            (false, 0, Some(owner)) => {
                format!("The current turn was started by {owner}; only they or an approver can stop it.")
            }
            (false, 0, None) => "Nothing is running.".to_string(),
            (true, 0, _) => "Stopping the current turn.".to_string(),
            (true, n, _) => format!("Stopping the current turn and {n} child session(s)."),
            (false, n, _) => format!("Stopping {n} child session(s) you started."),
        }
    }
}
