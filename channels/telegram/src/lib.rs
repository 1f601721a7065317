//! Telegram adapter (teloxide): long polling with the update offset kept in
//! the control plane, private chats, groups and forum topics, mentions and
//! replies, HTML rendering split at 4096 characters, typing, approval
//! prompts with an inline keyboard whose presses arrive as `/approve` and
//! `/deny` commands, and Telegram's own retry-after on 429. Edited messages
//! are ignored (the original was already answered). Webhook mode, with a
//! required secret, replaces polling when configured.

mod draft;
mod errors;
mod files;
mod html;
mod inbound;
mod poller;
mod setup_error;
pub use setup_error::SetupError;
mod status;
mod webhook;

use async_trait::async_trait;
use errors::map_err;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use switchboard_core::{
    ApprovalPrompt, Attachment, Channel, ChannelError, ChatAddress, FetchError, Intake, MessageRef, Outbound,
    OutboundFile, PromptEdit, StreamLimits, split_message,
};
use teloxide::payloads::{
    AnswerCallbackQuerySetters, EditMessageTextSetters, SendDocumentSetters, SendMessageSetters, SetWebhookSetters,
};
use teloxide::prelude::Requester;
use teloxide::types::{
    BotCommand, ChatAction, ChatId, InlineKeyboardButton, InlineKeyboardMarkup, MessageId, ParseMode, ThreadId,
};

pub(crate) use poller::Poller;

/// Telegram's limit for one message.
pub const MAX_MESSAGE: usize = 4096;
/// The longest part of a streamed answer one message carries (room left
/// for what HTML escaping adds).
const STREAM_PART: usize = 3500;

/// How much longer than a long poll its HTTP client waits.
const POLL_CLIENT_MARGIN: Duration = Duration::from_secs(10);
/// Connections kept open to the Bot API between requests: a burst of
/// replies opens as many as it needs, and those past this many are closed
/// when done. With 16, the bench's 1,250 replies opened about 800
/// connections (each a TLS handshake against the real Bot API); with 512,
/// as many as the raw relay, at no cost in memory measured
/// (docs/performance.md).
const IDLE_CONNECTIONS: usize = 512;

/// The Bot API client: teloxide's settings (timeouts, `TCP_NODELAY`) with
/// the idle connections bounded. A proxy is taken from the usual
/// `HTTPS_PROXY` / `ALL_PROXY` variables.
fn bot(token: &str) -> Result<teloxide::Bot, SetupError> {
    let client = teloxide::net::default_reqwest_settings()
        .pool_max_idle_per_host(IDLE_CONNECTIONS)
        .build()
        .map_err(|e| SetupError::Client(Box::new(e)))?;
    Ok(teloxide::Bot::with_client(token, client))
}

/// Inbound button presses carry `cbq:<callback query id>` as their message
/// id; a reply to one is shown as the answer to the press.
pub(crate) const CALLBACK_PREFIX: &str = "cbq:";

/// One Telegram bot (`telegram.<alias>`): long polling or a webhook in,
/// the Bot API out.
pub struct TelegramChannel {
    name: String,
    /// For every call but `getUpdates` (teloxide's short client timeout).
    bot: teloxide::Bot,
    /// `getUpdates`, made by the poller itself (see `poller`).
    poll_url: Arc<reqwest::Url>,
    poll_client: reqwest::Client,
    /// Downloads attachments and makes the calls teloxide has no binding
    /// for (`sendMessageDraft`).
    http: reqwest::Client,
    poll_timeout: Duration,
    username: OnceLock<String>,
    webhook: Option<Webhook>,
    receiving: switchboard_core::Receiving,
}

/// Webhook mode settings (else long polling).
#[derive(Clone)]
pub struct Webhook {
    /// The public HTTPS URL Telegram posts to.
    pub url: String,
    /// The local address to listen on.
    pub listen: String,
    /// What Telegram must send in `X-Telegram-Bot-Api-Secret-Token`.
    pub secret: String,
}

/// The secret never appears in logs or error messages.
impl std::fmt::Debug for Webhook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Webhook")
            .field("url", &self.url)
            .field("listen", &self.listen)
            .field("secret", &"***")
            .finish()
    }
}

fn chat_id(chat: &str) -> Result<ChatId, ChannelError> {
    chat.parse::<i64>()
        .map(ChatId)
        .map_err(|_| ChannelError::Permanent(format!("'{chat}' is not a Telegram chat id")))
}

/// Topic 1 ("General") is addressed without a thread id.
fn topic(address: &ChatAddress) -> Option<ThreadId> {
    address
        .thread
        .as_deref()
        .and_then(|t| t.parse::<i32>().ok())
        .filter(|t| *t != 1)
        .map(|t| ThreadId(MessageId(t)))
}

impl TelegramChannel {
    /// `name` is the instance (`telegram.main`), `api_url` the Bot API base.
    /// `poll_timeout` is how long Telegram may hold one `getUpdates`.
    pub fn new(
        name: &str,
        token: &str,
        api_url: &str,
        webhook: Option<Webhook>,
        poll_timeout: Duration,
    ) -> Result<Self, SetupError> {
        let bad = |setting, url: &str| {
            let url = url.to_string();
            move |source| SetupError::BadUrl { setting, url, source }
        };
        let url = url::Url::parse(api_url.trim_end_matches('/')).map_err(bad("api_url", api_url))?;
        if let Some(w) = &webhook {
            url::Url::parse(&w.url).map_err(bad("webhook_url", &w.url))?;
        }
        // The poll's HTTP client must outlast the poll: an idle long poll
        // that the client cuts short looks like an unreachable server.
        let poll_client = switchboard_http::client_builder()
            .connect_timeout(Duration::from_secs(5))
            .timeout(poll_timeout + POLL_CLIENT_MARGIN)
            .build()
            .map_err(|e| SetupError::Client(Box::new(e)))?;
        let poll_url = url::Url::parse(&format!("{}/bot{token}/getUpdates", url.as_str().trim_end_matches('/')))
            .map_err(bad("api_url (with the bot token)", api_url))?;
        Ok(Self {
            name: name.to_string(),
            bot: bot(token)?.set_api_url(url),
            poll_url: Arc::new(poll_url),
            poll_client,
            http: switchboard_http::client_builder()
                .connect_timeout(Duration::from_secs(10))
                .pool_max_idle_per_host(IDLE_CONNECTIONS)
                .build()
                .map_err(|e| SetupError::Client(Box::new(e)))?,
            poll_timeout,
            username: OnceLock::new(),
            webhook,
            receiving: switchboard_core::Receiving::default(),
        })
    }

    async fn send_html(
        &self,
        address: &ChatAddress,
        html: String,
        markup: Option<InlineKeyboardMarkup>,
    ) -> Result<MessageRef, ChannelError> {
        let mut req = self
            .bot
            .send_message(chat_id(&address.chat)?, html)
            .parse_mode(ParseMode::Html);
        if let Some(t) = topic(address) {
            req = req.message_thread_id(t);
        }
        if let Some(k) = markup {
            req = req.reply_markup(k);
        }
        let m = req.await.map_err(map_err)?;
        Ok(MessageRef {
            chat: address.chat.clone(),
            id: m.id.0.to_string(),
        })
    }

    /// One part of a long message. A part after the first (`later`) is
    /// tried again here on a rate limit or a failure that passes, for up to
    /// `PART_WAIT` in all: the parts before it are out, and the caller's
    /// retry of the whole message would post them twice (Telegram has no
    /// idempotency key to drop a repeat).
    async fn send_part(&self, address: &ChatAddress, html: String, later: bool) -> Result<MessageRef, ChannelError> {
        let (mut tries, mut waited) = (0u32, Duration::ZERO);
        loop {
            let sent = self.send_html(address, html.clone(), None).await;
            let wait = match &sent {
                Err(ChannelError::RateLimited(secs)) if later => Duration::from_secs((*secs).max(1)),
                Err(ChannelError::Transient(e)) if later => {
                    tracing::warn!(channel = %self.name, error = %e, "a part of a long message failed; trying it again");
                    Duration::from_secs(1 << tries.min(4))
                }
                _ => return sent,
            };
            if waited + wait > PART_WAIT {
                return sent;
            }
            tokio::time::sleep(wait).await;
            (tries, waited) = (tries + 1, waited + wait);
        }
    }
}

/// How long a later part of a long message is tried again, in all, before
/// the error goes to the caller.
const PART_WAIT: Duration = Duration::from_secs(30);

#[async_trait]
impl Channel for TelegramChannel {
    fn name(&self) -> &str {
        &self.name
    }

    async fn whoami(&self) -> Result<Option<String>, ChannelError> {
        let me = self.bot.get_me().await.map_err(map_err)?;
        Ok(Some(format!("@{}", me.username())))
    }

    /// Learn the bot's name, register its commands, then poll: every
    /// message people send is handed to `intake`.
    async fn start(&self, intake: Arc<dyn Intake>) -> Result<(), ChannelError> {
        let me = self.bot.get_me().await.map_err(map_err)?;
        let username = me.username().to_string();
        let _ = self.username.set(username.clone());
        let commands: Vec<BotCommand> = switchboard_core::catalog::menu()
            .map(|c| BotCommand::new(c.name, c.about))
            .collect();
        if let Err(e) = self.bot.set_my_commands(commands).await {
            tracing::warn!(channel = %self.name, error = %map_err(e), "setMyCommands failed");
        }
        let poller = Poller {
            url: self.poll_url.clone(),
            http: self.poll_client.clone(),
            name: self.name.clone(),
            username,
            timeout: self.poll_timeout,
        };
        match &self.webhook {
            Some(w) => {
                let url = url::Url::parse(&w.url).map_err(|e| ChannelError::Permanent(e.to_string()))?;
                self.bot
                    .set_webhook(url)
                    .secret_token(w.secret.clone())
                    .await
                    .map_err(map_err)?;
                intake.connection(&self.name, Ok(()));
                webhook::serve(poller, w.secret.clone(), &w.listen, intake)
                    .await
                    .map_err(|e| ChannelError::Permanent(format!("cannot listen on {}: {e}", w.listen)))?;
            }
            None => {
                // getUpdates is refused while a webhook is set.
                self.bot.delete_webhook().await.map_err(map_err)?;
                intake.connection(&self.name, Ok(()));
                // A poller that panics or gives up is started again; it
                // resumes from the offset in the control plane.
                let task = switchboard_core::supervise(self.name.clone(), move || poller.clone().run(intake.clone()));
                self.receiving.set(task);
            }
        }
        Ok(())
    }

    /// Stop polling (a webhook server keeps listening, but its updates are
    /// refused by the intake once the lease moved).
    async fn stop(&self) {
        self.receiving.stop();
    }

    async fn send(&self, message: &Outbound) -> Result<Vec<MessageRef>, ChannelError> {
        if let Some(id) = message
            .reply_to
            .as_deref()
            .and_then(|r| r.strip_prefix(CALLBACK_PREFIX))
        {
            let answer: String = message.text.chars().take(200).collect();
            self.bot
                .answer_callback_query(teloxide::types::CallbackQueryId(id.to_string()))
                .text(answer)
                .show_alert(true)
                .await
                .map_err(map_err)?;
            return Ok(Vec::new());
        }
        let mut refs = Vec::new();
        for chunk in split_message(&message.text, MAX_MESSAGE) {
            for html in html::render_within(&chunk, MAX_MESSAGE) {
                refs.push(self.send_part(&message.address, html, !refs.is_empty()).await?);
            }
        }
        Ok(refs)
    }

    async fn typing(&self, address: &ChatAddress) -> Result<(), ChannelError> {
        let mut req = self.bot.send_chat_action(chat_id(&address.chat)?, ChatAction::Typing);
        if let Some(t) = topic(address) {
            req = teloxide::payloads::SendChatActionSetters::message_thread_id(req, t);
        }
        req.await.map(|_| ()).map_err(map_err)
    }

    async fn set_status(&self, mark: &switchboard_core::StatusMark<'_>) -> Result<(), ChannelError> {
        status::set(&self.bot, mark).await
    }

    async fn send_approval_prompt(
        &self,
        address: &ChatAddress,
        prompt: &ApprovalPrompt,
    ) -> Result<MessageRef, ChannelError> {
        self.send_html(address, html::escape(&prompt.render_text()), Some(keyboard(prompt)))
            .await
    }

    /// A draft in private chats (`sendMessageDraft`), elsewhere one
    /// message edited, at most once a second per chat (Telegram's flood
    /// limit for edits); parts stay well under 4096 characters so their
    /// HTML does too.
    fn streaming(&self) -> Option<StreamLimits> {
        Some(StreamLimits {
            max_len: STREAM_PART,
            min_interval: std::time::Duration::from_secs(1),
            drafts: true,
        })
    }

    /// `sendMessageDraft`, with the text rendered as for messages.
    async fn draft(&self, address: &ChatAddress, draft_id: u64, text: &str) -> Result<(), ChannelError> {
        let chat = chat_id(&address.chat)?.0;
        let html = html::render_within(text, MAX_MESSAGE)
            .into_iter()
            .next()
            .unwrap_or_default();
        let topic = topic(address).map(|t| t.0.0);
        draft::send(&self.bot, &self.http, (chat, topic), draft_id, &html).await
    }

    async fn edit_message(&self, message: &MessageRef, text: &str) -> Result<(), ChannelError> {
        let id: i32 = message
            .id
            .parse()
            .map_err(|_| ChannelError::Permanent("bad message id".into()))?;
        let html = html::render_within(text, MAX_MESSAGE)
            .into_iter()
            .next()
            .unwrap_or_default();
        let edited = self
            .bot
            .edit_message_text(chat_id(&message.chat)?, MessageId(id), html)
            .parse_mode(ParseMode::Html)
            .await;
        match edited {
            Ok(_) => Ok(()),
            // The same text again: nothing to change, nothing lost.
            Err(e) if e.to_string().contains("message is not modified") => Ok(()),
            Err(e) => Err(map_err(e)),
        }
    }

    async fn fetch_attachment(&self, attachment: &Attachment, limit: u64) -> Result<Vec<u8>, FetchError> {
        files::fetch(&self.bot, &self.http, &attachment.source, limit).await
    }

    async fn upload_limit(&self) -> Option<u64> {
        Some(files::UPLOAD_LIMIT)
    }

    /// `sendDocument` (the file as sent, never recompressed); a caption
    /// too long to sit under it goes first as a message of its own.
    async fn send_file(&self, file: &OutboundFile) -> Result<MessageRef, ChannelError> {
        let caption = file.caption.as_deref().unwrap_or("");
        let fits = caption.chars().count() <= files::MAX_CAPTION;
        if !fits {
            self.send(&Outbound::new(file.address.clone(), caption)).await?;
        }
        let upload = teloxide::types::InputFile::memory(file.data.clone()).file_name(file.name.clone());
        let mut req = self.bot.send_document(chat_id(&file.address.chat)?, upload);
        if fits && !caption.is_empty() {
            req = req.caption(caption.to_string());
        }
        if let Some(t) = topic(&file.address) {
            req = req.message_thread_id(t);
        }
        let m = req.await.map_err(map_err)?;
        Ok(MessageRef {
            chat: file.address.chat.clone(),
            id: m.id.0.to_string(),
        })
    }

    async fn update_approval_prompt(&self, edit: &PromptEdit<'_>) -> Result<(), ChannelError> {
        let id: i32 = edit
            .message
            .id
            .parse()
            .map_err(|_| ChannelError::Permanent("bad message id".into()))?;
        let text = html::escape(&edit.text());
        let mut req = self
            .bot
            .edit_message_text(chat_id(&edit.message.chat)?, MessageId(id), text)
            .parse_mode(ParseMode::Html);
        // A request still open (two-person rule) keeps its buttons.
        if !edit.state.is_final() {
            req = req.reply_markup(keyboard(edit.prompt));
        }
        req.await.map(|_| ()).map_err(map_err)
    }
}

/// The buttons of an approval prompt: one per answer it offers.
fn keyboard(prompt: &ApprovalPrompt) -> InlineKeyboardMarkup {
    InlineKeyboardMarkup::new([prompt
        .choices()
        .iter()
        .map(|c| InlineKeyboardButton::callback(prompt.label(*c), c.button_data(&prompt.id)))
        .collect::<Vec<_>>()])
}
