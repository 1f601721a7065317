//! The chat router: every inbound message goes either to a slash command or
//! to the session of `(channel, chat, thread)`. Turns of one session run one
//! after another; different sessions run side by side.

use crate::approvals::RouteBroker;
use crate::channels::ChannelSet;
use crate::commands::{self, Command, CommandContext};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use switchboard_config::Config;
use switchboard_core::{ApprovalChoice, Inbound, Outbound, UserId};
use switchboard_runtime::{Runtime, TurnError, TurnRequest};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Tries per reply before it goes to the durable outbox.
const SEND_ATTEMPTS: u32 = 8;
/// How often a typing notice is renewed while a turn runs.
const TYPING_RENEWAL: std::time::Duration = std::time::Duration::from_secs(4);

/// The turn a session is running: how to stop it, and who asked for it.
type Current = Arc<Mutex<Option<(CancellationToken, UserId)>>>;

struct Session {
    queue: mpsc::UnboundedSender<Inbound>,
    current: Current,
}

pub struct Router {
    runtime: Runtime,
    channels: ChannelSet,
    broker: Arc<RouteBroker>,
    sessions: Mutex<HashMap<String, Session>>,
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
                match other {
                    None => self.enqueue(agent, session_key, m),
                    Some(Command::Stop) => {
                        let text = self.stop(agent, &session_key, &m).await;
                        self.reply(&m, text).await;
                    }
                    Some(cmd) => {
                        let ctx = CommandContext {
                            runtime: &self.runtime,
                            agent,
                            session_key: &session_key,
                            address: &m.address,
                            sender: &m.sender,
                        };
                        let text = commands::apply(&cmd, &ctx).await;
                        self.reply(&m, text).await;
                    }
                }
            }
        }
    }

    fn current_turn(&self, session_key: &str) -> Option<(CancellationToken, UserId)> {
        let sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        sessions
            .get(session_key)
            .and_then(|s| s.current.lock().unwrap_or_else(|p| p.into_inner()).clone())
    }

    /// `/stop`: an operator (approver) stops the turn and every child of
    /// the session; anyone else only their own turn and the children they
    /// asked for — in a group, one person cannot stop another's work.
    async fn stop(&self, agent: &str, session_key: &str, m: &Inbound) -> String {
        let ctx = CommandContext {
            runtime: &self.runtime,
            agent,
            session_key,
            address: &m.address,
            sender: &m.sender,
        };
        let operator = ctx.sender_may_operate();
        let turn = self.current_turn(session_key);
        let mut stopped_turn = false;
        let mut refused = None;
        if let Some((token, owner)) = &turn {
            if operator || *owner == m.sender {
                token.cancel();
                stopped_turn = true;
            } else {
                refused = Some(owner.clone());
            }
        }
        let children = commands::stop_session_children(&self.runtime, session_key, &m.sender, operator).await;
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

    /// Queue a message for its session, starting the session's worker if needed.
    fn enqueue(self: &Arc<Self>, agent: &str, session_key: String, m: Inbound) {
        let mut sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        let session = sessions.entry(session_key.clone()).or_insert_with(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            let current = Arc::new(Mutex::new(None));
            tokio::spawn(
                self.clone()
                    .worker(agent.to_string(), session_key.clone(), rx, current.clone()),
            );
            Session { queue: tx, current }
        });
        let _ = session.queue.send(m);
    }

    async fn worker(
        self: Arc<Self>,
        agent: String,
        session_key: String,
        mut queue: mpsc::UnboundedReceiver<Inbound>,
        current: Current,
    ) {
        while let Some(m) = queue.recv().await {
            let cancel = CancellationToken::new();
            *current.lock().unwrap_or_else(|p| p.into_inner()) = Some((cancel.clone(), m.sender.clone()));
            // Typing shows while the turn runs (platforms let it lapse after
            // a few seconds, so it is renewed), without delaying the turn.
            let typing = self.channels.get(&m.address.channel).cloned().map(|ch| {
                let address = m.address.clone();
                tokio::spawn(async move {
                    loop {
                        let _ = ch.typing(&address).await;
                        tokio::time::sleep(TYPING_RENEWAL).await;
                    }
                })
            });
            let result = self
                .runtime
                .run_turn(TurnRequest {
                    agent: agent.clone(),
                    session_key: session_key.clone(),
                    origin: Some(m.address.clone()),
                    sender: Some(m.sender.to_string()),
                    text: m.text.clone(),
                    broker: self.broker.clone(),
                    cancel,
                    events: None,
                })
                .await;
            current.lock().unwrap_or_else(|p| p.into_inner()).take();
            if let Some(t) = typing {
                t.abort();
            }
            let text = match result {
                Ok(reply) if reply.text.trim().is_empty() => "(the agent gave no answer)".to_string(),
                Ok(reply) => reply.text,
                Err(TurnError::Cancelled) => "(stopped)".to_string(),
                Err(e) => format!("error: {e}"),
            };
            self.reply(&m, text).await;
        }
    }
}
