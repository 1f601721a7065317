//! Discord adapter (serenity): the gateway websocket in, REST out. Guild
//! channels are answered when the bot is mentioned (`<@bot>`), replied to,
//! or in a thread it answers in; each conversation is a thread started
//! under the person's message (a forum post's thread is its own
//! conversation); DMs are always answered. Replies keep Discord Markdown,
//! are split below 2000 characters without breaking code blocks, never
//! ping anyone, and carry a nonce per part so a part sent again lands once.
//! Approval prompts carry buttons; presses and application commands are
//! acknowledged at once and answered (ephemerally where only the person
//! should see it) when the gateway has decided. See `docs/channels.md`.

mod commands;
mod cursor;
mod files;
mod handler;
mod inbound;
mod prompt;
mod receiver;
mod rest;
mod state;
mod status;

use async_trait::async_trait;
use serde_json::json;
use serenity::all::{ChannelId, GatewayIntents, MessageId};
use serenity::builder::CreateAttachment;
use serenity::gateway::GatewayError;
use serenity::http::{Http, HttpBuilder};
use std::sync::Arc;
use std::time::Duration;
use switchboard_core::{
    ApprovalPrompt, Attachment, Channel, ChannelError, ChatAddress, FetchError, Intake, MessageRef, Outbound,
    OutboundFile, PromptEdit, SetupError, StreamLimits, TaskEnd, split_message,
};

/// Discord's limit for one message.
pub const MAX_MESSAGE: usize = 2000;
/// The longest part of a streamed answer one message carries.
const STREAM_PART: usize = 1900;

/// What the bot asks the gateway for. MESSAGE_CONTENT is privileged: it
/// must be switched on in the developer portal (Bot → Privileged Gateway
/// Intents → Message Content Intent), or Discord closes with 4014.
fn intents() -> GatewayIntents {
    GatewayIntents::GUILDS
        | GatewayIntents::GUILD_MESSAGES
        | GatewayIntents::DIRECT_MESSAGES
        | GatewayIntents::MESSAGE_CONTENT
}

/// How long a refused login waits before it is tried again (a wrong token
/// or intents will not fix themselves; Discord counts logins).
const REFUSED_LOGIN_PAUSE: Duration = Duration::from_secs(600);

/// One Discord bot (`discord.<alias>`).
pub struct DiscordChannel {
    name: String,
    token: String,
    api_url: Option<String>,
    gateway_url: Option<String>,
    http: Arc<Http>,
    /// Downloads attachments from the CDN.
    files: reqwest::Client,
    guilds: Vec<u64>,
    live: Arc<state::Live>,
    receiving: switchboard_core::Receiving,
    receiver: switchboard_core::Receiving,
}

/// Settings of one bot.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// Guilds answered in (empty: every guild the bot is in).
    pub guilds: Vec<u64>,
    /// A Discord-compatible server to use instead of discord.com (tests).
    /// Serenity's rate limiter does not follow it, so it is off then.
    pub api_url: Option<String>,
    /// The gateway websocket, instead of the one `GET /gateway` names.
    pub gateway_url: Option<String>,
}

fn http(token: &str, api_url: Option<&str>) -> Http {
    let builder = HttpBuilder::new(token);
    match api_url {
        Some(url) => builder
            .proxy(url.trim_end_matches('/'))
            .ratelimiter_disabled(true)
            .build(),
        None => builder.build(),
    }
}

fn snowflake(s: &str, what: &str) -> Result<u64, ChannelError> {
    s.parse::<u64>()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| ChannelError::Permanent(format!("'{s}' is not a Discord {what} id")))
}

impl DiscordChannel {
    /// `name` is the instance (`discord.main`).
    pub fn new(name: &str, token: &str, settings: Settings) -> Result<Self, SetupError> {
        if token.trim().is_empty() {
            return Err(SetupError::Empty { key: "bot_token" });
        }
        if let Some(url) = &settings.api_url
            && !(url.starts_with("http://") || url.starts_with("https://"))
        {
            return Err(SetupError::NotHttp {
                key: "api_url",
                value: url.clone(),
            });
        }
        Ok(Self {
            name: name.to_string(),
            token: token.to_string(),
            http: Arc::new(http(token, settings.api_url.as_deref())),
            files: switchboard_http::client_builder()
                .connect_timeout(Duration::from_secs(10))
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .map_err(|e| SetupError::HttpClient(Box::new(e)))?,
            api_url: settings.api_url,
            gateway_url: settings.gateway_url,
            guilds: settings.guilds,
            live: Arc::new(state::Live::new(name)),
            receiving: switchboard_core::Receiving::default(),
            receiver: switchboard_core::Receiving::default(),
        })
    }

    /// Post `body` where `address` says: the chat, or its conversation
    /// thread (started on first use).
    async fn post(&self, address: &ChatAddress, body: &serde_json::Value) -> Result<MessageRef, ChannelError> {
        self.post_with(address, &[], body).await
    }

    /// `post`, with files attached.
    async fn post_with(
        &self,
        address: &ChatAddress,
        files: &[CreateAttachment],
        body: &serde_json::Value,
    ) -> Result<MessageRef, ChannelError> {
        let chat = snowflake(&address.chat, "channel")?;
        let posted = match address.thread.as_deref() {
            Some(t) => {
                let thread = snowflake(t, "thread")?;
                let name = self.live.thread_name(thread);
                // Marked first: a follow-up may arrive the moment the
                // answer is posted, and must find the thread the bot's.
                self.live.answers_in(thread).await;
                rest::post_in_thread(&self.http, chat, thread, &name, files, body).await
            }
            None => rest::post(&self.http, chat, files, body).await,
        };
        let m = posted.map_err(|e| rest::map_err(&e))?;
        // Catching up after a new session starts from here too (a thread
        // may have no other message yet).
        self.live.cursor.lock().saw(m.channel_id.get(), m.id.get());
        Ok(MessageRef {
            chat: m.channel_id.get().to_string(),
            id: m.id.get().to_string(),
        })
    }

    /// The answer to an interaction: the "thinking" response becomes the
    /// first part, follow-ups carry the rest. Once its token is gone (15
    /// minutes passed, or the gateway restarted) a public answer is posted
    /// in the chat like any reply; a private one is not posted at all.
    async fn answer_interaction(&self, via: &str, message: &Outbound) -> Result<Vec<MessageRef>, ChannelError> {
        let mut fields = via.splitn(3, ':');
        let (Some(how), Some(id)) = (fields.next(), fields.next().and_then(|i| i.parse::<u64>().ok())) else {
            return Err(ChannelError::Permanent("malformed interaction reference".into()));
        };
        let Some(token) = self.live.token(id) else {
            if how == "e" {
                return Err(ChannelError::Permanent(
                    "the interaction's answer window has passed (15 minutes, or the gateway restarted); a private answer is not posted in the chat".into(),
                ));
            }
            let mut public = message.clone();
            public.reply_to = None;
            return Box::pin(self.send(&public)).await;
        };
        let (token, text) = (token.as_str(), message.text.as_str());
        let flags = if how == "e" { 64 } else { 0 };
        for (i, part) in split_message(text, MAX_MESSAGE).into_iter().enumerate() {
            let body = json!({"content": part, "allowed_mentions": rest::no_pings(), "flags": flags});
            let sent = if i == 0 {
                rest::retrying(|| self.http.edit_original_interaction_response(token, &body, Vec::new())).await
            } else {
                rest::retrying(|| self.http.create_followup_message(token, &body, Vec::new())).await
            };
            sent.map_err(|e| rest::map_err(&e))?;
        }
        Ok(Vec::new())
    }
}

/// The gateway connection, until it fails; a refused login (bad token,
/// intents not enabled in the portal) is said plainly and not hammered.
async fn connect(
    name: String,
    token: String,
    urls: (Option<String>, Option<String>),
    handler: handler::Handler,
    live: Arc<state::Live>,
) -> TaskEnd {
    let (api_url, gateway_url) = urls;
    let client = serenity::Client::builder(token.clone(), intents());
    let client = match &api_url {
        Some(_) => serenity::all::ClientBuilder::new_with_http(http(&token, api_url.as_deref()), intents()),
        None => client,
    };
    let mut client = match client.event_handler(handler).await {
        Ok(c) => c,
        Err(e) => return TaskEnd::Failed(format!("cannot start the Discord client: {e}")),
    };
    if let Some(url) = gateway_url {
        *client.ws_url.lock().await = url;
    }
    *live.shards.lock() = Some(client.shard_manager.clone());
    let ended = client.start().await;
    let why = match ended {
        Err(serenity::Error::Gateway(GatewayError::DisallowedGatewayIntents)) => Some(
            "Discord refused the Message Content intent (close code 4014): enable it in the developer portal, Bot → Privileged Gateway Intents → Message Content Intent",
        ),
        Err(serenity::Error::Gateway(GatewayError::InvalidAuthentication)) => {
            Some("Discord refused the bot token (close code 4004): check bot_token")
        }
        _ => None,
    };
    if let Some(why) = why {
        tracing::error!(channel = %name, "{why}");
        tokio::time::sleep(REFUSED_LOGIN_PAUSE).await;
        return TaskEnd::Failed(why.to_string());
    }
    TaskEnd::Failed(match ended {
        Ok(()) => "the Discord gateway connection ended".into(),
        Err(e) => format!("the Discord gateway connection failed: {e}"),
    })
}

#[async_trait]
impl Channel for DiscordChannel {
    fn name(&self) -> &str {
        &self.name
    }

    async fn whoami(&self) -> Result<Option<String>, ChannelError> {
        let me = self.http.get_current_user().await.map_err(|e| rest::map_err(&e))?;
        Ok(Some(me.name.clone()))
    }

    /// Read the cursor, then connect (supervised: a failed connection is
    /// made again) and hand what people send to `intake`.
    async fn start(&self, intake: Arc<dyn Intake>) -> Result<(), ChannelError> {
        let stored = intake
            .cursor(&self.name)
            .await
            .map_err(|e| ChannelError::Transient(e.to_string()))?;
        match cursor::Cursor::parse(stored.as_deref()) {
            Ok(c) => *self.live.cursor.lock() = c,
            Err(e) => {
                tracing::warn!(channel = %self.name, error = %e, "the stored Discord cursor is unreadable; starting without it");
            }
        }
        self.live.set_intake(intake);
        let (tx, rx) = tokio::sync::mpsc::channel(handler::QUEUE);
        let receiver = receiver::Receiver {
            live: self.live.clone(),
            http: self.http.clone(),
            guilds: self.guilds.clone(),
        };
        self.receiver.set(tokio::spawn(receiver.run(rx)));
        let (name, token) = (self.name.clone(), self.token.clone());
        let urls = (self.api_url.clone(), self.gateway_url.clone());
        let live = self.live.clone();
        let task = switchboard_core::supervise(self.name.clone(), move || {
            let handler = handler::Handler {
                name: name.clone(),
                tx: tx.clone(),
                live: live.clone(),
            };
            connect(name.clone(), token.clone(), urls.clone(), handler, live.clone())
        });
        self.receiving.set(task);
        Ok(())
    }

    /// Close the gateway connection and stop receiving (the lease moved to
    /// another gateway).
    async fn stop(&self) {
        self.receiving.stop();
        self.receiver.stop();
        let shards = self.live.shards.lock().take();
        if let Some(shards) = shards {
            shards.shutdown_all().await;
        }
    }

    async fn send(&self, message: &Outbound) -> Result<Vec<MessageRef>, ChannelError> {
        if let Some(via) = message
            .reply_to
            .as_deref()
            .and_then(|r| r.strip_prefix(inbound::INTERACTION_PREFIX))
        {
            return self.answer_interaction(via, message).await;
        }
        // A message without a delivery key (a streamed part, a notice) gets
        // a nonce of its own: one made from its text would make Discord
        // hand back an earlier message that began the same way (a nonce
        // is remembered for minutes), and a stream would edit that one.
        let key = message
            .delivery_key
            .clone()
            .unwrap_or_else(|| format!("once:{}", uuid::Uuid::new_v4()));
        let mut refs = Vec::new();
        for (i, part) in split_message(&message.text, MAX_MESSAGE).into_iter().enumerate() {
            let body = json!({
                "content": part, "allowed_mentions": rest::no_pings(),
                "nonce": rest::nonce(&key, i), "enforce_nonce": true
            });
            refs.push(self.post(&message.address, &body).await?);
        }
        Ok(refs)
    }

    async fn typing(&self, address: &ChatAddress) -> Result<(), ChannelError> {
        let target = match address.thread.as_deref() {
            // The conversation's thread once it exists; the channel before.
            Some(t) if self.live.cursor.lock().threads.contains(&snowflake(t, "thread")?) => t,
            _ => address.chat.as_str(),
        };
        let id = ChannelId::new(snowflake(target, "channel")?);
        self.http.broadcast_typing(id).await.map_err(|e| rest::map_err(&e))
    }

    async fn set_status(&self, mark: &switchboard_core::StatusMark<'_>) -> Result<(), ChannelError> {
        status::set(&self.http, mark).await
    }

    async fn send_approval_prompt(
        &self,
        address: &ChatAddress,
        prompt: &ApprovalPrompt,
    ) -> Result<MessageRef, ChannelError> {
        // Keyed by the request: a prompt sent again after a try whose
        // answer was lost is the one message.
        let body = json!({
            "content": prompt::render(prompt, None),
            "allowed_mentions": rest::no_pings(),
            "components": prompt::buttons(prompt),
            "nonce": rest::nonce(&format!("approval:{}", prompt.id), 0), "enforce_nonce": true
        });
        self.post(address, &body).await
    }

    async fn update_approval_prompt(&self, edit: &PromptEdit<'_>) -> Result<(), ChannelError> {
        let text = prompt::render(edit.prompt, Some(edit.state));
        // A request still open (two-person rule) keeps its buttons.
        let components = if edit.state.is_final() {
            json!([])
        } else {
            prompt::buttons(edit.prompt)
        };
        let body = json!({"content": text, "components": components, "allowed_mentions": rest::no_pings()});
        let (chat, id) = (
            snowflake(&edit.message.chat, "channel")?,
            snowflake(&edit.message.id, "message")?,
        );
        rest::retrying(|| {
            self.http
                .edit_message(ChannelId::new(chat), MessageId::new(id), &body, Vec::new())
        })
        .await
        .map(|_| ())
        .map_err(|e| rest::map_err(&e))
    }

    /// One message edited at most once a second (Discord allows a few
    /// edits per channel in five seconds).
    fn streaming(&self) -> Option<StreamLimits> {
        Some(StreamLimits {
            max_len: STREAM_PART,
            min_interval: std::time::Duration::from_secs(1),
            drafts: false,
        })
    }

    async fn fetch_attachment(&self, attachment: &Attachment, limit: u64) -> Result<Vec<u8>, FetchError> {
        files::fetch(&self.files, &attachment.source, self.api_url.as_deref(), limit).await
    }

    async fn upload_limit(&self) -> Option<u64> {
        Some(files::UPLOAD_LIMIT)
    }

    async fn send_file(&self, file: &OutboundFile) -> Result<MessageRef, ChannelError> {
        let caption: String = file
            .caption
            .as_deref()
            .unwrap_or("")
            .chars()
            .take(MAX_MESSAGE)
            .collect();
        let body = json!({"content": caption, "allowed_mentions": rest::no_pings()});
        let upload = CreateAttachment::bytes(file.data.clone(), file.name.clone());
        self.post_with(&file.address, &[upload], &body).await
    }

    async fn edit_message(&self, message: &MessageRef, text: &str) -> Result<(), ChannelError> {
        let text: String = text.chars().take(MAX_MESSAGE).collect();
        let body = json!({"content": text, "allowed_mentions": rest::no_pings()});
        let (chat, id) = (snowflake(&message.chat, "channel")?, snowflake(&message.id, "message")?);
        // Not retried here: the stream waits longer after a rate limit.
        self.http
            .edit_message(ChannelId::new(chat), MessageId::new(id), &body, Vec::new())
            .await
            .map(|_| ())
            .map_err(|e| rest::map_err(&e))
    }
}
