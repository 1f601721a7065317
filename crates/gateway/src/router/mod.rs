//! The chat router: every inbound message goes either to a slash command or
//! to the session of `(channel, chat, thread)`. Turns of one session run one
//! after another; different sessions run side by side (`session`). Chat
//! input is bounded (`[limits]`): a person's message rate, a session's
//! queue, and how long an idle session stays in memory.

mod rate;
mod session;

use crate::approvals::RouteBroker;
use crate::channels::ChannelSet;
use crate::commands::{self, Command, CommandContext};
use session::{Queued, Session};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use switchboard_config::Config;
use switchboard_core::{ApprovalChoice, Inbound, Outbound};
use switchboard_runtime::Runtime;
use tokio::sync::mpsc;

/// Tries per reply before it goes to the durable outbox.
const SEND_ATTEMPTS: u32 = 8;
/// The answer to a message that does not fit in its session's queue.
const BUSY: &str =
    "Busy: this conversation already has messages waiting. Try again when the current answer has arrived.";

pub struct Router {
    runtime: Runtime,
    channels: ChannelSet,
    broker: Arc<RouteBroker>,
    sessions: Mutex<HashMap<String, Session>>,
    /// Recent messages per person, for `[limits].messages_per_minute`.
    rate: Mutex<rate::Window>,
}

/// The agent that answers on channel instance `channel`.
fn agent_for<'a>(config: &'a Config, channel: &str) -> Option<&'a str> {
    config
        .agents
        .iter()
        .find(|(_, a)| a.enabled && a.channels.iter().any(|c| c == channel))
        .map(|(n, _)| n.as_str())
}

impl Router {
    pub fn new(runtime: Runtime, channels: ChannelSet, broker: Arc<RouteBroker>) -> Arc<Self> {
        Arc::new(Self {
            runtime,
            channels,
            broker,
            sessions: Mutex::new(HashMap::new()),
            rate: Mutex::new(rate::Window::default()),
        })
    }

    /// Route messages until every channel has hung up.
    pub async fn run(self: Arc<Self>, mut inbound: mpsc::Receiver<Inbound>) {
        while let Some(message) = inbound.recv().await {
            let router = self.clone();
            tokio::spawn(async move { router.handle(message).await });
        }
    }

    async fn reply(&self, to: &Inbound, text: String) {
        let mut out = Outbound::new(to.address.clone(), text);
        out.reply_to = to.message_id.clone();
        crate::reply::deliver(&self.channels, self.runtime.store(), &out, SEND_ATTEMPTS).await;
    }

    async fn handle(self: Arc<Self>, m: Inbound) {
        let config = self.runtime.config().clone();
        let channel = m.address.channel.clone();
        // Identity comes from the platform that authenticated the person:
        // an id of another platform on this channel is refused outright.
        if !m.sender.belongs_to(&channel) {
            tracing::warn!(%channel, sender = %m.sender, "message whose sender is not an id of this channel's platform refused");
            return;
        }
        let allowed = config.channels.allowed_users(&channel).unwrap_or(&[]);
        if !m.sender.is_listed_in(allowed) {
            tracing::warn!(%channel, sender = %m.sender, "message from a sender not in allowed_users");
            if m.direct || m.mentioned {
                let text = format!(
                    "Sorry, {} may not use this bot here. An operator can add it to [channels.{}].allowed_users.",
                    m.sender, channel
                );
                self.reply(&m, text).await;
            }
            return;
        }
        let command = commands::parse(&m.text);
        if command.is_none() && !m.direct && !m.mentioned && config.channels.require_mention(&channel) {
            tracing::debug!(%channel, chat = %m.address.chat, sender = %m.sender, "not mentioned in a group: ignored");
            return;
        }
        // Approvals and /stop always get through; everything else counts
        // against the person's rate.
        let exempt = matches!(
            command,
            Some(Command::Approve { .. } | Command::Deny { .. } | Command::Stop | Command::ForAnotherBot)
        );
        if !exempt {
            let limit = config.limits.messages_per_minute;
            let verdict =
                self.rate
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .check(&m.sender, std::time::Instant::now(), limit);
            if let rate::Verdict::Limited { tell } = verdict {
                tracing::warn!(%channel, sender = %m.sender, "message over the rate limit dropped");
                if tell {
                    let text = format!(
                        "{} is sending more than {limit} messages a minute; this one was not taken. Wait a moment and send it again.",
                        m.sender
                    );
                    self.reply(&m, text).await;
                }
                return;
            }
        }
        match command {
            Some(Command::ForAnotherBot) => {
                tracing::debug!(%channel, sender = %m.sender, "a command for another bot: ignored");
            }
            Some(Command::Approve { id, always }) => {
                let choice = if always {
                    ApprovalChoice::Always
                } else {
                    ApprovalChoice::AllowOnce
                };
                let text = self.broker.decide(&id, &m.sender, choice, None, &m.address).await;
                self.reply(&m, text).await;
            }
            Some(Command::Deny { id, reason }) => {
                let text = self
                    .broker
                    .decide(&id, &m.sender, ApprovalChoice::Deny, reason, &m.address)
                    .await;
                self.reply(&m, text).await;
            }
            other => {
                let Some(agent) = agent_for(&config, &channel) else {
                    let text =
                        format!("No agent answers on {channel}; add it to an agent's [agents.<alias>].channels.");
                    self.reply(&m, text).await;
                    return;
                };
                let session_key = m.address.session_key(agent);
                let ctx = CommandContext {
                    runtime: &self.runtime,
                    agent,
                    session_key: &session_key,
                    address: &m.address,
                    sender: &m.sender,
                };
                let text = match other {
                    None => {
                        let q = Queued { m, follow_up: None };
                        if let Err(session::Busy(q)) = self.enqueue(agent, session_key, q) {
                            tracing::warn!(%channel, sender = %q.m.sender, "session queue full; message refused");
                            self.reply(&q.m, BUSY.to_string()).await;
                        }
                        return;
                    }
                    Some(Command::Subagents(commands::subagents::Sub::Send { target, message })) => {
                        match commands::subagents::send::plan(&ctx, &target, &message).await {
                            commands::subagents::send::Plan::Done(text) => text,
                            commands::subagents::send::Plan::FollowUp {
                                agent,
                                session_key,
                                text,
                                prefix,
                            } => {
                                let mut follow = m.clone();
                                follow.text = text;
                                let q = Queued {
                                    m: follow,
                                    follow_up: Some(prefix),
                                };
                                if self.enqueue(&agent, session_key, q).is_ok() {
                                    return;
                                }
                                BUSY.to_string()
                            }
                        }
                    }
                    Some(Command::Stop) => self.stop(&ctx).await,
                    Some(cmd) => commands::apply(&cmd, &ctx).await,
                };
                self.reply(&m, text).await;
            }
        }
    }

    /// `/stop`: an operator (approver) stops the turn and every child of
    /// the session; anyone else only their own turn and the children they
    /// asked for — in a group, one person cannot stop another's work.
    async fn stop(&self, ctx: &CommandContext<'_>) -> String {
        let (session_key, sender) = (ctx.session_key, ctx.sender);
        let operator = ctx.sender_may_operate();
        let turn = self.current_turn(session_key);
        let mut stopped_turn = false;
        let mut refused = None;
        if let Some((token, owner)) = &turn {
            if operator || owner == sender {
                token.cancel();
                stopped_turn = true;
            } else {
                refused = Some(owner.clone());
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
