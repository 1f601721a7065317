//! Matrix adapter (matrix-sdk): password or access-token login restored
//! from a session file, the SDK's SQLite state and crypto store under the
//! data directory (so encrypted rooms are readable and a restart keeps its
//! device), a sync loop whose token is kept in the control plane (a restart
//! resumes after the last handed-over event and never answers old messages
//! again), auto-join of configured rooms and of invitations from allowed
//! people, threads (`m.thread`), replies, mentions (`m.mentions`, user id,
//! display name, replies to the bot, threads the bot answers in), Markdown
//! rendered to `formatted_body`, replies split below the 32 KiB body limit,
//! typing notices, reactions, and approval prompts decided by reactions
//! (✅ once, ♾️ always, ❌ deny) or the text commands. Edits (`m.replace`)
//! of people's messages are ignored: the original was already answered.

mod content;
mod errors;
mod inbound;
mod login;
mod media;
mod password_check;
mod recent;
mod status;
mod sync;
mod unfinished;

pub use password_check::check_password;

use async_trait::async_trait;
use matrix_sdk::Client;
use matrix_sdk::ruma::{OwnedTransactionId, RoomId, TransactionId};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use switchboard_core::{
    ApprovalChoice, ApprovalPrompt, Attachment, Channel, ChannelError, ChatAddress, FetchError, Intake, MessageRef,
    Outbound, OutboundFile, PromptEdit, SetupError, StreamLimits,
};

/// How the bot signs in.
#[derive(Clone)]
pub enum Auth {
    /// Log in with the account's password (a device is created once and kept).
    Password(String),
    /// Use an existing access token.
    AccessToken(String),
}

/// Everything the adapter needs from the configuration.
#[derive(Clone)]
pub struct Settings {
    /// Instance name, `matrix.<alias>`.
    pub name: String,
    /// The homeserver's URL.
    pub homeserver: String,
    /// The bot's account (`@bot:example.org`).
    pub user_id: String,
    /// How it signs in.
    pub auth: Auth,
    /// Where the SDK keeps its state, crypto keys and our session file.
    pub store_dir: PathBuf,
    /// Passphrase for the SDK's SQLite store, if any.
    pub store_passphrase: Option<String>,
    /// Rooms (ids or aliases) joined at start.
    pub auto_join: Vec<String>,
    /// Invitations from these people are accepted (`"*"`: anyone); empty: none.
    pub invites_from: Vec<String>,
    /// Long-poll timeout of one `/sync`.
    pub sync_timeout: Duration,
}

/// Tries per event before the failure is handed to the caller.
const SEND_RETRIES: u32 = 4;

/// The approval reactions and what each one means.
pub const REACTIONS: [(&str, ApprovalChoice); 3] = [
    ("✅", ApprovalChoice::AllowOnce),
    ("♾️", ApprovalChoice::Always),
    ("❌", ApprovalChoice::Deny),
];

/// One Matrix account (`matrix.<alias>`): sync in, room events out.
pub struct MatrixChannel {
    inner: Arc<Inner>,
    receiving: switchboard_core::Receiving,
}

/// The adapter's parts, shared with its background tasks.
struct Inner {
    settings: Settings,
    /// Set when the channel starts.
    intake: OnceLock<Arc<dyn Intake>>,
    client: OnceLock<Client>,
    state: Arc<State>,
}

impl Inner {
    /// Sign in, then take the sync position and join the configured rooms.
    async fn connect(&self) -> Result<sync::Syncer, ChannelError> {
        let client = match self.client.get() {
            Some(c) => c.clone(),
            None => {
                let c = login::connect(&self.settings).await?;
                let _ = self.client.set(c.clone());
                c
            }
        };
        let intake = self
            .intake
            .get()
            .cloned()
            .ok_or_else(|| ChannelError::Permanent("the channel is not started".into()))?;
        let mut syncer = sync::Syncer::new(client, self.settings.clone(), intake, self.state.clone());
        syncer.prepare().await?;
        Ok(syncer)
    }

    /// `connect`, retried with backoff until it succeeds.
    async fn connect_until_reachable(&self) -> sync::Syncer {
        let mut backoff = Duration::from_secs(1);
        loop {
            tokio::time::sleep(backoff).await;
            match self.connect().await {
                Ok(syncer) => {
                    tracing::info!(channel = %self.settings.name, "connected to the homeserver");
                    return syncer;
                }
                Err(e) => {
                    if let Some(intake) = self.intake.get() {
                        intake.connection(&self.settings.name, Err(format!("cannot connect: {e}")));
                    }
                    tracing::warn!(channel = %self.settings.name, error = %e, ?backoff, "still cannot connect; retrying");
                    backoff = (backoff * 2).min(Duration::from_secs(30));
                }
            }
        }
    }
}

/// What the adapter remembers between events.
#[derive(Default)]
pub(crate) struct State {
    /// Prompt event id → approval id, for prompts still open.
    prompts: Mutex<HashMap<String, String>>,
    /// Events the bot sent (replies to them mention the bot).
    sent: Mutex<recent::Recent>,
    /// Thread roots the bot has answered in (later messages there are for it).
    threads: Mutex<recent::Recent>,
    /// Messages whose sending failed part-way, for the caller's retry.
    unfinished: Mutex<unfinished::Table>,
    /// Person's message event id → the bot's status reaction on it.
    status_reactions: Mutex<HashMap<String, String>>,
}

impl State {
    fn remember_sent(&self, event_id: &str, thread: Option<&str>) {
        self.sent.lock().insert(event_id.to_string());
        if let Some(t) = thread {
            self.threads.lock().insert(t.to_string());
        }
    }
}

impl MatrixChannel {
    /// The adapter for `settings`; nothing connects before `start`.
    pub fn new(settings: Settings) -> Result<Self, SetupError> {
        url_ok("homeserver", &settings.homeserver)?;
        matrix_sdk::ruma::UserId::parse(settings.user_id.as_str()).map_err(|e| SetupError::Invalid {
            key: "user_id",
            value: settings.user_id.clone(),
            why: e.to_string(),
        })?;
        Ok(Self {
            inner: Arc::new(Inner {
                settings,
                intake: OnceLock::new(),
                client: OnceLock::new(),
                state: Arc::new(State::default()),
            }),
            receiving: switchboard_core::Receiving::default(),
        })
    }
}

impl Inner {
    fn client(&self) -> Result<&Client, ChannelError> {
        self.client
            .get()
            .ok_or_else(|| ChannelError::Transient("the Matrix client has not signed in yet".into()))
    }

    fn room(&self, chat: &str) -> Result<matrix_sdk::Room, ChannelError> {
        let id =
            RoomId::parse(chat).map_err(|_| ChannelError::Permanent(format!("'{chat}' is not a Matrix room id")))?;
        self.client()?
            .get_room(&id)
            .ok_or_else(|| ChannelError::Permanent(format!("the bot is not in room {chat}")))
    }

    /// Send one event's content; returns its event id.
    async fn send_content(
        &self,
        room: &matrix_sdk::Room,
        event_type: &str,
        content: serde_json::Value,
    ) -> Result<String, ChannelError> {
        self.send_content_as(room, event_type, content, &TransactionId::new())
            .await
    }

    /// Send one event's content as transaction `txn`. Rate limits and
    /// transient failures are retried here, per event, with that id: the
    /// homeserver drops a repeat of an event it already took.
    async fn send_content_as(
        &self,
        room: &matrix_sdk::Room,
        event_type: &str,
        content: serde_json::Value,
        txn: &TransactionId,
    ) -> Result<String, ChannelError> {
        let mut attempt = 0u32;
        loop {
            let result = room
                .send_raw(event_type, content.clone())
                .with_transaction_id(txn)
                .await
                .map_err(errors::map);
            let wait = match result {
                Ok(sent) => return Ok(sent.response.event_id.to_string()),
                Err(ChannelError::RateLimited(secs)) if attempt < SEND_RETRIES => Duration::from_secs(secs),
                Err(ChannelError::Transient(e)) if attempt < SEND_RETRIES => {
                    let backoff = Duration::from_millis(250 * 2u64.pow(attempt.min(5)));
                    tracing::warn!(channel = %self.settings.name, error = %e, ?backoff, "send failed; retrying");
                    backoff
                }
                Err(e) => return Err(e),
            };
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    /// Add a reaction (`key`) to a message.
    async fn react(&self, message: &MessageRef, key: &str) -> Result<(), ChannelError> {
        let room = self.room(&message.chat)?;
        self.send_content(&room, "m.reaction", content::reaction(&message.id, key))
            .await
            .map(|_| ())
    }
}

fn url_ok(key: &'static str, url: &str) -> Result<(), SetupError> {
    if url.starts_with("http://") || url.starts_with("https://") {
        Ok(())
    } else {
        Err(SetupError::NotHttp {
            key,
            value: url.to_string(),
        })
    }
}

#[async_trait]
impl Channel for MatrixChannel {
    fn name(&self) -> &str {
        &self.inner.settings.name
    }

    /// With an access token, the homeserver's `whoami`; a password is
    /// only tried when the channel starts (a login makes a device).
    async fn whoami(&self) -> Result<Option<String>, ChannelError> {
        let s = &self.inner.settings;
        let Auth::AccessToken(token) = &s.auth else {
            return Ok(None);
        };
        let url = format!(
            "{}/_matrix/client/v3/account/whoami",
            s.homeserver.trim_end_matches('/')
        );
        let answer = switchboard_http::client()
            .get(url)
            .bearer_auth(token)
            .timeout(Duration::from_secs(10))
            .send()
            .await
            .map_err(|e| ChannelError::Transient(format!("the homeserver could not be reached: {e}")))?;
        let status = answer.status();
        if status.as_u16() == 401 || status.as_u16() == 403 {
            return Err(ChannelError::Permanent(format!(
                "the homeserver refused the access token (HTTP {status})"
            )));
        }
        if !status.is_success() {
            return Err(ChannelError::Transient(format!(
                "the homeserver answered HTTP {status}"
            )));
        }
        let body: serde_json::Value = answer
            .json()
            .await
            .map_err(|e| ChannelError::Transient(format!("unreadable whoami answer: {e}")))?;
        Ok(body["user_id"].as_str().map(str::to_string))
    }

    /// Sign in (or restore the stored session), join the configured rooms,
    /// skip history on the very first start, then sync in the background.
    /// A homeserver that cannot be reached yet does not stop the gateway:
    /// the adapter keeps trying in the background (sends wait in the outbox
    /// meanwhile). A refused login or a broken store does.
    async fn start(&self, intake: Arc<dyn Intake>) -> Result<(), ChannelError> {
        // Started again after the lease came back (the keeper hands the
        // same intake each time): the first one stays.
        let _ = self.inner.intake.set(intake);
        let first = match self.inner.connect().await {
            Ok(s) => Some(s),
            Err(e @ (ChannelError::Transient(_) | ChannelError::RateLimited(_))) => {
                tracing::warn!(channel = %self.inner.settings.name, error = %e, "the homeserver cannot be reached; retrying in the background");
                None
            }
            Err(e) => return Err(e),
        };
        // The sync loop is supervised: if it panics or ends, it signs in
        // again (restoring the stored session) and resumes from the token.
        let first = Arc::new(parking_lot::Mutex::new(first));
        let inner = self.inner.clone();
        let task = switchboard_core::supervise(self.inner.settings.name.clone(), move || {
            let (inner, first) = (inner.clone(), first.clone());
            async move {
                let ready = first.lock().take();
                let syncer = match ready {
                    Some(s) => s,
                    None => inner.connect_until_reachable().await,
                };
                syncer.run().await
            }
        });
        self.receiving.set(task);
        Ok(())
    }

    /// Stop syncing (the lease moved to another gateway).
    async fn stop(&self) {
        self.receiving.stop();
    }

    async fn send(&self, message: &Outbound) -> Result<Vec<MessageRef>, ChannelError> {
        let room = self.inner.room(&message.address.chat)?;
        let thread = message.address.thread.as_deref();
        // A retry of a message that failed part-way resumes where it
        // stopped, with the failed part's transaction id: no part twice.
        let key = unfinished::key(message);
        let resumed = self.inner.state.unfinished.lock().take(key);
        let (mut refs, mut txn) = match resumed {
            Some(u) => {
                tracing::info!(channel = %self.inner.settings.name, already_sent = u.sent.len(), "resuming a message that failed part-way");
                (u.sent, u.txn)
            }
            None => (Vec::new(), TransactionId::new()),
        };
        for (i, chunk) in content::split(&message.text).into_iter().enumerate().skip(refs.len()) {
            // A keyed delivery names each part after its key: sent again
            // (after a crash), the homeserver recognises it and keeps one.
            if let Some(k) = &message.delivery_key {
                txn = OwnedTransactionId::from(format!("sb.{k}.{i}"));
            }
            let body = content::message(&chunk, thread, message.reply_to.as_deref());
            match self.inner.send_content_as(&room, "m.room.message", body, &txn).await {
                Ok(id) => {
                    self.inner.state.remember_sent(&id, thread);
                    refs.push(MessageRef {
                        chat: message.address.chat.clone(),
                        id,
                    });
                    txn = TransactionId::new();
                }
                Err(e) => {
                    let u = unfinished::Unfinished { sent: refs, txn };
                    self.inner.state.unfinished.lock().put(key, u);
                    return Err(e);
                }
            }
        }
        Ok(refs)
    }

    async fn typing(&self, address: &ChatAddress) -> Result<(), ChannelError> {
        self.inner
            .room(&address.chat)?
            .typing_notice(true)
            .await
            .map_err(errors::map)
    }

    async fn set_status(&self, mark: &switchboard_core::StatusMark<'_>) -> Result<(), ChannelError> {
        self.inner.set_status(mark).await
    }

    async fn send_approval_prompt(
        &self,
        address: &ChatAddress,
        prompt: &ApprovalPrompt,
    ) -> Result<MessageRef, ChannelError> {
        let room = self.inner.room(&address.chat)?;
        let text = content::prompt_text(prompt, None);
        // Plain text: tool arguments in the summary must not become HTML.
        let body = content::plain_message(&text, address.thread.as_deref());
        // Keyed by the request: a prompt sent again after a try whose answer
        // was lost is the one event.
        let txn = OwnedTransactionId::from(format!("sb.approval.{}", prompt.id));
        let id = self.inner.send_content_as(&room, "m.room.message", body, &txn).await?;
        self.inner.state.remember_sent(&id, address.thread.as_deref());
        self.inner.state.prompts.lock().insert(id.clone(), prompt.id.clone());
        let message = MessageRef {
            chat: address.chat.clone(),
            id,
        };
        // The choices as ready-made reactions: one click adds the approver's own.
        for (key, _) in REACTIONS.iter().filter(|(_, c)| prompt.choices().contains(c)) {
            if let Err(e) = self.inner.react(&message, key).await {
                tracing::warn!(channel = %self.inner.settings.name, error = %e, "cannot add an approval reaction");
            }
        }
        Ok(message)
    }

    /// One event replaced (`m.replace`, the full text each time) at most
    /// once a second.
    fn streaming(&self) -> Option<StreamLimits> {
        Some(StreamLimits {
            max_len: content::STREAM_PART,
            min_interval: std::time::Duration::from_secs(1),
            drafts: false,
        })
    }

    async fn edit_message(&self, message: &MessageRef, text: &str) -> Result<(), ChannelError> {
        let room = self.inner.room(&message.chat)?;
        let body = content::replacement(&message.id, text, content::Format::Markdown);
        self.inner.send_content(&room, "m.room.message", body).await?;
        Ok(())
    }

    async fn fetch_attachment(&self, attachment: &Attachment, limit: u64) -> Result<Vec<u8>, FetchError> {
        let client = self.inner.client().map_err(|e| FetchError::Failed(e.to_string()))?;
        media::fetch(client, attachment, limit).await
    }

    async fn upload_limit(&self) -> Option<u64> {
        Some(media::upload_limit(self.inner.client().ok()?).await)
    }

    /// Uploaded (encrypted where the room is), then sent in the thread.
    async fn send_file(&self, file: &OutboundFile) -> Result<MessageRef, ChannelError> {
        let room = self.inner.room(&file.address.chat)?;
        let encrypted = room
            .latest_encryption_state()
            .await
            .map_err(errors::map)?
            .is_encrypted();
        let body = media::upload(self.inner.client()?, file, encrypted).await?;
        let thread = file.address.thread.as_deref();
        let id = self
            .inner
            .send_content(&room, "m.room.message", content::in_thread(body, thread))
            .await?;
        self.inner.state.remember_sent(&id, thread);
        Ok(MessageRef {
            chat: file.address.chat.clone(),
            id,
        })
    }

    async fn update_approval_prompt(&self, edit: &PromptEdit<'_>) -> Result<(), ChannelError> {
        let room = self.inner.room(&edit.message.chat)?;
        let text = content::prompt_text(edit.prompt, Some(edit.state));
        self.inner
            .send_content(
                &room,
                "m.room.message",
                content::replacement(&edit.message.id, &text, content::Format::Plain),
            )
            .await?;
        // A request still open (two-person rule) still takes reactions.
        if edit.state.is_final() {
            self.inner.state.prompts.lock().remove(&edit.message.id);
        }
        Ok(())
    }
}
