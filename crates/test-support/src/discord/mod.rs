//! A loopback Discord for tests: REST API v10 (the calls serenity makes
//! for a bot: gateway discovery, current user, channels, messages with
//! `nonce` + `enforce_nonce`, message history with `after`, threads from a
//! message, typing, global application commands, interaction callbacks and
//! webhook edits/follow-ups) and a gateway websocket (HELLO, IDENTIFY →
//! READY, heartbeats, dispatches with sequence numbers, RESUME → replay +
//! RESUMED, INVALID_SESSION, close codes). Switches answer 429 with
//! `retry_after`, drop the websocket, invalidate the session, refuse the
//! MESSAGE_CONTENT intent (close 4014). Tests act as people (messages,
//! button presses, slash commands) and read what the bot did.

mod files;
mod gateway;
mod interactions;
mod payloads;
mod reactions;
mod rest;

pub use payloads::{APP_ID, BOT_ID, BOT_NAME, GUILD_ID, Kind, bot_user, user};

use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{Notify, mpsc};

/// One channel of the fake.
#[derive(Debug, Clone)]
pub(crate) struct ChannelState {
    pub kind: Kind,
    pub name: String,
    pub parent: Option<u64>,
    pub owner: Option<u64>,
    pub recipient: Option<Value>,
}

/// What a test can read of one interaction.
#[derive(Debug, Clone, Default)]
pub struct InteractionLog {
    /// The callback (type and data), when the bot answered.
    pub callback: Option<Value>,
    /// Each edit of the original response, in order.
    pub edits: Vec<Value>,
    /// Follow-up messages.
    pub followups: Vec<Value>,
}

/// A gateway command for the live connection.
#[derive(Debug)]
pub(crate) enum Control {
    /// Send this dispatch.
    Dispatch(Value),
    /// Cut the TCP connection without a close frame.
    Drop,
    /// Send op 9 (not resumable).
    InvalidSession,
}

#[derive(Default)]
pub(crate) struct State {
    pub next_id: u64,
    pub channels: BTreeMap<u64, ChannelState>,
    /// Messages per channel, oldest first.
    pub messages: BTreeMap<u64, Vec<Value>>,
    /// (channel, nonce) → message id, for `enforce_nonce`.
    pub nonces: HashMap<(u64, String), u64>,
    /// Every REST call: (method, path, body).
    pub calls: Vec<(String, String, Value)>,
    pub rate_limited: u32,
    /// (posts still answered, posts then answered 500).
    pub failing: Option<(u32, u32)>,
    pub interactions: BTreeMap<u64, (String, InteractionLog)>,
    pub commands: Vec<Value>,
    pub command_puts: u32,
    pub typing: u32,
    // Gateway.
    pub session: Option<String>,
    pub seq: u64,
    /// Dispatches of the current session, for RESUME.
    pub log: Vec<(u64, Value)>,
    pub live: Option<mpsc::UnboundedSender<Control>>,
    pub identifies: u32,
    pub resumes: u32,
    pub deny_message_content: bool,
    pub refuse_connections: bool,
    /// Dispatches are lost (neither sent nor kept), as when Discord drops a
    /// session's events.
    pub lose_events: bool,
    pub last_intents: u64,
    // Files.
    /// Where the CDN is (`http://<rest address>`).
    pub cdn_base: String,
    /// Attachment bytes by attachment id.
    pub cdn: HashMap<u64, Vec<u8>>,
    /// Attachment downloads served.
    pub cdn_fetches: u32,
    /// The next uploads answered 500.
    pub failing_uploads: u32,
}

#[derive(Clone)]
pub(crate) struct Shared {
    pub state: Arc<Mutex<State>>,
    pub changed: Arc<Notify>,
    pub ws_url: String,
}

impl Shared {
    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn id(&self) -> u64 {
        let mut s = self.lock();
        s.next_id += 1;
        s.next_id
    }

    /// Send a dispatch to the live connection (or keep it for RESUME).
    pub(crate) fn dispatch(&self, t: &str, d: Value) {
        let mut s = self.lock();
        if s.lose_events && t != "READY" && t != "RESUMED" {
            return;
        }
        s.seq += 1;
        let event = json!({"op": 0, "t": t, "s": s.seq, "d": d});
        let seq = s.seq;
        s.log.push((seq, event.clone()));
        if let Some(live) = &s.live {
            let _ = live.send(Control::Dispatch(event));
        }
    }
}

/// A running fake Discord; stops when dropped.
pub struct FakeDiscord {
    shared: Shared,
    rest_addr: std::net::SocketAddr,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for FakeDiscord {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

impl FakeDiscord {
    /// Listen on two free loopback ports (REST, gateway), with one guild
    /// text channel `general` (id [`FakeDiscord::GENERAL`]).
    pub async fn start() -> Self {
        let ws = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let rest = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let shared = Shared {
            state: Arc::new(Mutex::new(State {
                next_id: 1_200_000_000_000_000_000,
                ..State::default()
            })),
            changed: Arc::new(Notify::new()),
            ws_url: format!("ws://{}", ws.local_addr().expect("address")),
        };
        shared.lock().channels.insert(
            Self::GENERAL,
            ChannelState {
                kind: Kind::Text,
                name: "general".into(),
                parent: None,
                owner: None,
                recipient: None,
            },
        );
        let rest_addr = rest.local_addr().expect("address");
        shared.lock().cdn_base = format!("http://{rest_addr}");
        let tasks = vec![
            tokio::spawn(gateway::serve(ws, shared.clone())),
            tokio::spawn(rest::serve(rest, shared.clone())),
        ];
        Self {
            shared,
            rest_addr,
            tasks,
        }
    }

    /// The id of the guild text channel every fake has.
    pub const GENERAL: u64 = 1_150_000_000_000_000_001;

    /// For `[channels.discord.x].api_url` (serenity's proxy base).
    pub fn url(&self) -> String {
        format!("http://{}", self.rest_addr)
    }

    /// Add a guild channel of `kind` named `name` (a forum or a text channel).
    pub fn add_channel(&self, kind: Kind, name: &str) -> u64 {
        let id = self.shared.id();
        self.shared.lock().channels.insert(
            id,
            ChannelState {
                kind,
                name: name.into(),
                parent: None,
                owner: None,
                recipient: None,
            },
        );
        id
    }

    /// Open (or find) the DM channel with `person`.
    pub fn dm_with(&self, person: &Value) -> u64 {
        let id = self.shared.id();
        self.shared.lock().channels.insert(
            id,
            ChannelState {
                kind: Kind::Dm,
                name: String::new(),
                parent: None,
                owner: None,
                recipient: Some(person.clone()),
            },
        );
        id
    }

    /// A person starts a post in a forum: a thread owned by them with its
    /// first message. Returns (thread id, message id).
    pub fn forum_post(&self, forum: u64, author: &Value, title: &str, content: &str) -> (u64, u64) {
        let thread = self.shared.id();
        let owner = author["id"].as_str().and_then(|s| s.parse().ok());
        self.shared.lock().channels.insert(
            thread,
            ChannelState {
                kind: Kind::Thread,
                name: title.into(),
                parent: Some(forum),
                owner,
                recipient: None,
            },
        );
        let thread_json = rest::channel_json(&self.shared, thread).unwrap_or_default();
        self.shared.dispatch("THREAD_CREATE", thread_json);
        let id = self.say(thread, author, content);
        (thread, id)
    }

    /// A person writes `content` in `channel`. Returns the message id.
    pub fn say(&self, channel: u64, author: &Value, content: &str) -> u64 {
        self.write(channel, author, content, None)
    }

    /// A person replies to message `to` in `channel`.
    pub fn reply(&self, channel: u64, author: &Value, content: &str, to: u64) -> u64 {
        self.write(channel, author, content, Some(to))
    }

    fn write(&self, channel: u64, author: &Value, content: &str, to: Option<u64>) -> u64 {
        self.write_with(channel, author, content, to, Vec::new())
    }

    /// `write`, with `attachments` on the message.
    pub(crate) fn write_with(
        &self,
        channel: u64,
        author: &Value,
        content: &str,
        to: Option<u64>,
        attachments: Vec<Value>,
    ) -> u64 {
        let id = self.shared.id();
        let guild = self
            .shared
            .lock()
            .channels
            .get(&channel)
            .is_some_and(|c| c.kind != Kind::Dm);
        let mut m = payloads::message(id, channel, author, content, guild);
        let mentions: Vec<Value> = mentioned_ids(content)
            .into_iter()
            .filter(|u| *u == BOT_ID)
            .map(|_| bot_user())
            .collect();
        m["mentions"] = json!(mentions);
        m["attachments"] = json!(attachments);
        if let Some(to) = to {
            m["message_reference"] = json!({"message_id": to.to_string(), "channel_id": channel.to_string(), "guild_id": guild.then(|| GUILD_ID.to_string()), "type": 0});
            m["referenced_message"] = self.message(channel, to).unwrap_or(Value::Null);
            m["type"] = json!(19);
        }
        self.shared.lock().messages.entry(channel).or_default().push(m.clone());
        self.shared.dispatch("MESSAGE_CREATE", m);
        id
    }

    /// A stored message.
    pub fn message(&self, channel: u64, id: u64) -> Option<Value> {
        let s = self.shared.lock();
        s.messages
            .get(&channel)?
            .iter()
            .find(|m| m["id"] == json!(id.to_string()))
            .cloned()
    }

    /// Poll `check` at every change until it gives a value, or panic with
    /// `failed()` after `secs`.
    async fn wait_until<T>(
        &self,
        secs: u64,
        mut check: impl FnMut() -> Option<T>,
        failed: impl FnOnce() -> String,
    ) -> T {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
        loop {
            let notified = self.shared.changed.notified();
            if let Some(v) = check() {
                return v;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                panic!("within {secs} s: {}", failed());
            }
        }
    }

    /// Messages the bot posted in `channel` (as they are now, edits included).
    pub fn bot_messages(&self, channel: u64) -> Vec<Value> {
        let s = self.shared.lock();
        s.messages
            .get(&channel)
            .map(|v| {
                v.iter()
                    .filter(|m| m["author"]["id"] == json!(BOT_ID.to_string()))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }

    /// How many messages the bot has posted anywhere.
    pub fn bot_post_count(&self) -> usize {
        let bot = json!(BOT_ID.to_string());
        self.shared
            .lock()
            .messages
            .values()
            .flatten()
            .filter(|m| m["author"]["id"] == bot)
            .count()
    }

    /// Wait until the bot has posted `n` messages in `channel`.
    pub async fn wait_bot_messages(&self, channel: u64, n: usize, secs: u64) -> Vec<Value> {
        self.wait_until(
            secs,
            || Some(self.bot_messages(channel)).filter(|got| got.len() >= n),
            || {
                let got = self.bot_messages(channel);
                format!(
                    "the bot posted {} of {n} messages in {channel}: {got:?}; calls: {:?}",
                    got.len(),
                    self.calls()
                )
            },
        )
        .await
    }

    /// The threads of `parent` (id → owner).
    pub fn threads_of(&self, parent: u64) -> Vec<u64> {
        self.shared
            .lock()
            .channels
            .iter()
            .filter(|(_, c)| c.parent == Some(parent) && c.kind == Kind::Thread)
            .map(|(id, _)| *id)
            .collect()
    }

    /// Every REST call the bot made: (method, path, body).
    pub fn calls(&self) -> Vec<(String, String, Value)> {
        self.shared.lock().calls.clone()
    }

    /// The next `n` message posts are answered 429.
    pub fn rate_limit(&self, n: u32) {
        self.shared.lock().rate_limited = n;
    }

    /// After `ok` more message posts, answer the next `failures` with 500.
    pub fn fail_posts(&self, ok: u32, failures: u32) {
        self.shared.lock().failing = Some((ok, failures));
    }

    /// For `[channels.discord.x].gateway_url`.
    pub fn gateway_url(&self) -> String {
        self.shared.ws_url.clone()
    }

    /// The registered global commands.
    pub fn commands(&self) -> Vec<Value> {
        self.shared.lock().commands.clone()
    }

    /// How many times the commands were registered (bulk overwrites).
    pub fn command_registrations(&self) -> u32 {
        self.shared.lock().command_puts
    }

    /// Typing indicators sent.
    pub fn typing_count(&self) -> u32 {
        self.shared.lock().typing
    }

    /// IDENTIFYs and RESUMEs received so far.
    pub fn sessions(&self) -> (u32, u32) {
        let s = self.shared.lock();
        (s.identifies, s.resumes)
    }

    /// Wait until the gateway has seen `identifies` IDENTIFYs and `resumes`
    /// RESUMEs (at least) and a connection is live.
    pub async fn wait_sessions(&self, identifies: u32, resumes: u32, secs: u64) {
        let live = || {
            let s = self.shared.lock();
            (s.identifies >= identifies && s.resumes >= resumes && s.live.is_some() && s.session.is_some())
                .then_some(())
        };
        self.wait_until(secs, live, || {
            format!(
                "the gateway saw {:?} (identifies, resumes), wanted ({identifies}, {resumes})",
                self.sessions()
            )
        })
        .await;
    }

    /// Cut the live websocket without a close frame (the session stays
    /// resumable).
    pub fn drop_connection(&self) {
        if let Some(live) = self.shared.lock().live.take() {
            let _ = live.send(Control::Drop);
        }
    }

    /// End the session: op 9 on the live connection; a later RESUME fails.
    pub fn invalidate_session(&self) {
        let mut s = self.shared.lock();
        s.session = None;
        s.log.clear();
        if let Some(live) = &s.live {
            let _ = live.send(Control::InvalidSession);
        }
    }

    /// Lose every dispatch from now on (messages are still stored and can
    /// be read over REST) until switched off.
    pub fn lose_events(&self, lose: bool) {
        self.shared.lock().lose_events = lose;
    }

    /// Close with 4014 when an IDENTIFY asks for MESSAGE_CONTENT.
    pub fn deny_message_content(&self, deny: bool) {
        self.shared.lock().deny_message_content = deny;
    }

    /// The intents of the last IDENTIFY.
    pub fn last_intents(&self) -> u64 {
        self.shared.lock().last_intents
    }
}

/// User ids mentioned as `<@id>` or `<@!id>` in `content`.
fn mentioned_ids(content: &str) -> Vec<u64> {
    content
        .split("<@")
        .skip(1)
        .filter_map(|rest| {
            let rest = rest.strip_prefix('!').unwrap_or(rest);
            rest.split('>').next()?.parse().ok()
        })
        .collect()
}
