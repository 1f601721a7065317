//! A loopback Telegram Bot API server for tests: enough of the real API
//! for teloxide (getMe, getUpdates with offset and a long poll held for the
//! full `timeout` when nothing is waiting, as Telegram does, sendMessage,
//! sendMessageDraft (or 404 as before Bot API 9.3), editMessageText,
//! answerCallbackQuery, sendChatAction, setMyCommands, deleteWebhook),
//! supergroups with forum topics, callback queries, dates
//! in seconds, case-insensitive method names, a switch that answers 429
//! with `retry_after`, and one that takes the API down (502 Bad Gateway).
//! Files (`files`): photos and documents people send, `getFile` and the
//! file download, `sendDocument` uploads. Tests inject what people do and
//! read what the bot sent.

mod files;
mod markup;
mod people;
mod reactions;
mod waits;

pub use files::Upload;
pub use markup::button;
pub(crate) use people::{bot_user, chat_for};
pub use people::{private_chat, supergroup, user};

use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::serve::ListenerExt;
use axum::{Json, Router};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;

/// The bot's user id.
pub const BOT_ID: i64 = 999_000;
/// The bot's username (without `@`).
pub const BOT_USERNAME: &str = "switchboard_bot";

#[derive(Default)]
pub(crate) struct State_ {
    updates: Vec<Value>,
    /// Updates below this id were confirmed (a getUpdates with a higher
    /// offset): Telegram forgets them, and never returns them again, even
    /// to a caller that asks from an older offset (a restored backup).
    confirmed_below: i64,
    next_update: i64,
    next_message: i64,
    /// Everything the bot did: sendMessage / editMessageText / answerCallbackQuery / sendChatAction.
    calls: Vec<(String, Value)>,
    /// How many of `calls` are sendMessage (benchmarks poll it often).
    sent: usize,
    rate_limited: u32,
    /// sendMessage calls let through before `rate_limited` applies.
    rate_limit_skip: u32,
    get_updates_calls: u32,
    /// `getUpdates` calls being held right now, and the most at once
    /// (Telegram answers 409 Conflict to a second concurrent poller).
    polling: u32,
    max_polling: u32,
    /// Answer every call 502 Bad Gateway, as Telegram's front does in an outage.
    down: bool,
    /// Calls answered 502 while down.
    refused: u32,
    /// Files people sent, by file id.
    files: std::collections::HashMap<String, Vec<u8>>,
    /// Files the bot uploaded.
    uploads: Vec<Upload>,
    /// The next uploads answered 500.
    failing_uploads: u32,
    /// `sendMessageDraft` is unknown (a Bot API server before 9.3).
    no_drafts: bool,
    /// The one bot token accepted, when set; others are answered 401
    /// Unauthorized, as Telegram answers a wrong or revoked token.
    token: Option<String>,
    /// Connections clients have opened so far.
    connections: u64,
}

#[derive(Clone)]
pub(crate) struct Shared {
    pub(crate) state: Arc<Mutex<State_>>,
    notify: Arc<Notify>,
}

/// A running fake Bot API server; stops when dropped.
pub struct FakeTelegram {
    addr: std::net::SocketAddr,
    shared: Shared,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeTelegram {
    fn drop(&mut self) {
        self.task.abort();
    }
}

pub(crate) fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

impl FakeTelegram {
    /// Listen on a free loopback port.
    pub async fn start() -> Self {
        let shared = Shared {
            state: Arc::new(Mutex::new(State_ {
                next_update: 1,
                next_message: 1,
                ..State_::default()
            })),
            notify: Arc::new(Notify::new()),
        };
        let app = Router::new()
            .route("/{bot}/{method}", post(call))
            .route("/file/{bot}/{*path}", get(files::download))
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let addr = listener.local_addr().unwrap();
        let counted = shared.state.clone();
        let listener = listener.tap_io(move |_| counted.lock().unwrap().connections += 1);
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self { addr, shared, task }
    }

    /// How many connections clients have opened so far.
    pub fn connections(&self) -> u64 {
        self.shared.state.lock().unwrap().connections
    }

    /// Accept only `token` from now on (every token is accepted until then).
    pub fn only_token(&self, token: &str) {
        self.shared.state.lock().unwrap().token = Some(token.to_string());
    }

    /// For `[channels.telegram.x].api_url`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn push_update(&self, kind: &str, body: Value) -> i64 {
        let mut s = self.shared.state.lock().unwrap();
        let id = s.next_update;
        s.next_update += 1;
        s.updates.push(json!({"update_id": id, kind: body}));
        drop(s);
        self.shared.notify.notify_waiters();
        id
    }

    /// A person writes `text` in `chat`; `thread` is a forum topic id;
    /// `reply_to` a message (of the bot) being answered. Returns the message id.
    pub fn message(&self, chat: Value, from: Value, text: &str, thread: Option<i64>, reply_to: Option<Value>) -> i64 {
        let (id, mut m) = self.compose(chat, from, "text", text, thread);
        if let Some(r) = reply_to {
            m["reply_to_message"] = r;
        }
        self.push_update("message", m);
        id
    }

    /// A new message from a person with `text` in `field` (`text`, or
    /// `caption` under a file), with its mention entities.
    fn compose(&self, chat: Value, from: Value, field: &str, text: &str, thread: Option<i64>) -> (i64, Value) {
        let id = {
            let mut s = self.shared.state.lock().unwrap();
            s.next_message += 1;
            s.next_message
        };
        let mut m = json!({"message_id": id, "date": now(), "chat": chat, "from": from, field: text});
        if let Some(t) = thread {
            m["message_thread_id"] = json!(t);
            m["is_topic_message"] = json!(true);
        }
        // Entities for @mentions, as Telegram sends them.
        if let Some(pos) = text.find(&format!("@{BOT_USERNAME}")) {
            let offset = text[..pos].encode_utf16().count();
            let key = if field == "text" {
                "entities"
            } else {
                "caption_entities"
            };
            m[key] = json!([{"type": "mention", "offset": offset, "length": BOT_USERNAME.len() + 1}]);
        }
        (id, m)
    }

    /// Deliver update `update_id` again as a new update (the same message,
    /// as a webhook retry or a duplicate delivery would bring it).
    pub fn redeliver(&self, update_id: i64) {
        let payload = {
            let s = self.shared.state.lock().unwrap();
            let u = s
                .updates
                .iter()
                .find(|u| u["update_id"] == update_id)
                .expect("an update to deliver again")
                .clone();
            u.as_object()
                .unwrap()
                .iter()
                .find(|(k, _)| *k != "update_id")
                .map(|(k, v)| (k.clone(), v.clone()))
                .unwrap()
        };
        self.push_update(&payload.0, payload.1);
    }

    /// The update id of the last update pushed.
    pub fn last_update_id(&self) -> i64 {
        self.shared.state.lock().unwrap().next_update - 1
    }

    /// A person presses an inline button with `data` under bot message `message`.
    pub fn press(&self, from: Value, message: Value, data: &str) {
        // Telegram's callback query ids are unique per press.
        let id = {
            let mut s = self.shared.state.lock().unwrap();
            s.next_message += 1;
            format!("cb{}", s.next_message)
        };
        self.push_update(
            "callback_query",
            json!({"id": id, "from": from, "message": message, "chat_instance": "ci-1", "data": data}),
        );
    }

    /// Take the API down (every call, held polls included, answers 502
    /// Bad Gateway) or bring it back.
    pub fn set_down(&self, down: bool) {
        self.shared.state.lock().unwrap().down = down;
        self.shared.notify.notify_waiters();
    }

    /// Answer `sendMessageDraft` 404 Not Found, as a server before Bot API
    /// 9.3 does.
    pub fn without_drafts(&self) {
        self.shared.state.lock().unwrap().no_drafts = true;
    }

    /// The next `n` sendMessage calls are answered with 429 and retry_after 1.
    pub fn rate_limit(&self, n: u32) {
        self.rate_limit_after(0, n);
    }

    /// The same, after `skip` more sendMessage calls went through (the
    /// second part of a long message limited, say).
    pub fn rate_limit_after(&self, skip: u32, n: u32) {
        let mut s = self.shared.state.lock().unwrap();
        (s.rate_limit_skip, s.rate_limited) = (skip, n);
    }

    /// Every call the bot made to `method` (lower case), in order.
    pub fn calls(&self, method: &str) -> Vec<Value> {
        let s = self.shared.state.lock().unwrap();
        s.calls
            .iter()
            .filter(|(m, _)| m == method)
            .map(|(_, v)| v.clone())
            .collect()
    }

    /// How many calls the bot made, by method (lower case; benchmarks).
    pub fn call_counts(&self) -> std::collections::BTreeMap<String, usize> {
        let s = self.shared.state.lock().unwrap();
        let mut counts = std::collections::BTreeMap::new();
        for (m, _) in &s.calls {
            *counts.entry(m.clone()).or_insert(0) += 1;
        }
        counts
    }

    /// How many messages the bot sent, without copying them (benchmarks).
    pub fn sent_count(&self) -> usize {
        self.shared.state.lock().unwrap().sent
    }

    /// Messages the bot sent (sendMessage results, as Telegram returned them).
    pub fn sent(&self) -> Vec<Value> {
        self.calls("sendmessage")
    }

    /// Calls answered 502 because the API was down.
    pub fn refused_while_down(&self) -> u32 {
        self.shared.state.lock().unwrap().refused
    }

    /// The most `getUpdates` calls held at once (Telegram allows one).
    pub fn max_concurrent_polls(&self) -> u32 {
        self.shared.state.lock().unwrap().max_polling
    }

    /// Forget the highest number of concurrent polls seen so far.
    pub fn reset_max_concurrent_polls(&self) {
        let mut s = self.shared.state.lock().unwrap();
        s.max_polling = s.polling;
    }

    /// How many `getUpdates` calls were made.
    pub fn get_updates_calls(&self) -> u32 {
        self.shared.state.lock().unwrap().get_updates_calls
    }
}

pub(crate) fn ok(result: Value) -> Response {
    Json(json!({"ok": true, "result": result})).into_response()
}

pub(crate) fn fail(code: u16, description: &str, params: Option<Value>) -> Response {
    let mut body = json!({"ok": false, "error_code": code, "description": description});
    if let Some(p) = params {
        body["parameters"] = p;
    }
    (axum::http::StatusCode::from_u16(code).unwrap(), Json(body)).into_response()
}

/// Arguments from a JSON body, or from `multipart/form-data` (which
/// teloxide uses for methods that may upload files, like setWebhook).
fn arguments(headers: &axum::http::HeaderMap, body: &[u8]) -> Value {
    let content_type = headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("");
    if let Some(boundary) = content_type.split("boundary=").nth(1) {
        let text = String::from_utf8_lossy(body);
        let mut args = serde_json::Map::new();
        for part in text.split(&format!("--{}", boundary.trim_matches('"'))) {
            let Some((head, value)) = part.split_once("\r\n\r\n") else {
                continue;
            };
            let Some(name) = head.split("name=\"").nth(1).and_then(|n| n.split('"').next()) else {
                continue;
            };
            let value = value.trim_end_matches("\r\n");
            let parsed = serde_json::from_str(value).unwrap_or_else(|_| json!(value));
            args.insert(name.to_string(), parsed);
        }
        return Value::Object(args);
    }
    serde_json::from_slice(body).unwrap_or(json!({}))
}

fn bad_gateway() -> Response {
    (
        axum::http::StatusCode::BAD_GATEWAY,
        "<html><body>502 Bad Gateway</body></html>",
    )
        .into_response()
}

async fn call(
    State(shared): State<Shared>,
    Path((bot, method)): Path<(String, String)>,
    headers: axum::http::HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    if !bot.starts_with("bot") {
        return fail(404, "Not Found", None);
    }
    {
        let mut s = shared.state.lock().unwrap();
        if s.down {
            s.refused += 1;
            return bad_gateway();
        }
        if s.token.as_ref().is_some_and(|t| bot[3..] != *t) {
            return fail(401, "Unauthorized", None);
        }
    }
    let method = method.to_lowercase();
    let args = arguments(&headers, &body);
    match method.as_str() {
        "getme" => ok(bot_user()),
        "deletewebhook" | "setwebhook" | "setmycommands" | "sendchataction" | "answercallbackquery" => {
            shared.state.lock().unwrap().calls.push((method, args));
            ok(json!(true))
        }
        "getupdates" => {
            let asked = args.get("offset").and_then(Value::as_i64).unwrap_or(0);
            let offset = {
                let mut s = shared.state.lock().unwrap();
                if s.down {
                    return bad_gateway();
                }
                s.confirmed_below = s.confirmed_below.max(asked);
                s.confirmed_below
            };
            // Telegram: "Values between 1-100 are accepted. Defaults to 100."
            let limit = args.get("limit").and_then(Value::as_u64).unwrap_or(100).clamp(1, 100) as usize;
            let timeout = args.get("timeout").and_then(Value::as_u64).unwrap_or(0).min(30);
            let deadline = tokio::time::Instant::now() + Duration::from_secs(timeout);
            {
                let mut s = shared.state.lock().unwrap();
                s.get_updates_calls += 1;
                s.polling += 1;
                s.max_polling = s.max_polling.max(s.polling);
            }
            // Counted down however the call ends (a caller that hangs up
            // drops this future).
            struct Polling(Shared);
            impl Drop for Polling {
                fn drop(&mut self) {
                    let mut s = self.0.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                    s.polling = s.polling.saturating_sub(1);
                }
            }
            let _polling = Polling(shared.clone());
            loop {
                let notified = shared.notify.notified();
                let found: Vec<Value> = {
                    let s = shared.state.lock().unwrap();
                    if s.down {
                        return bad_gateway();
                    }
                    // Updates are kept in id order.
                    let first = s
                        .updates
                        .partition_point(|u| u["update_id"].as_i64().unwrap_or(0) < offset);
                    s.updates[first..].iter().take(limit).cloned().collect()
                };
                if !found.is_empty() || tokio::time::Instant::now() >= deadline {
                    return ok(json!(found));
                }
                let _ = tokio::time::timeout_at(deadline, notified).await;
            }
        }
        "sendmessage" | "editmessagetext" => {
            let mut s = shared.state.lock().unwrap();
            if method == "sendmessage" && s.rate_limited > 0 {
                if s.rate_limit_skip > 0 {
                    s.rate_limit_skip -= 1;
                } else {
                    s.rate_limited -= 1;
                    return fail(429, "Too Many Requests: retry after 1", Some(json!({"retry_after": 1})));
                }
            }
            let chat_id = args.get("chat_id").cloned().unwrap_or(json!(0));
            let id = if method == "sendmessage" {
                s.next_message += 1;
                s.next_message
            } else {
                args.get("message_id").and_then(Value::as_i64).unwrap_or(0)
            };
            let chat = chat_for(&chat_id);
            let mut m = json!({
                "message_id": id, "date": now(), "chat": chat, "from": bot_user(),
                "text": args.get("text").cloned().unwrap_or(json!("")),
            });
            if let Some(t) = args.get("message_thread_id") {
                m["message_thread_id"] = t.clone();
                m["is_topic_message"] = json!(true);
            }
            if let Some(k) = args.get("reply_markup") {
                m["reply_markup"] = k.clone();
            }
            let mut record = m.clone();
            record["parse_mode"] = args.get("parse_mode").cloned().unwrap_or(Value::Null);
            if method == "sendmessage" {
                s.sent += 1;
            }
            s.calls.push((method, record));
            ok(m)
        }
        "sendmessagedraft" => {
            let mut s = shared.state.lock().unwrap();
            if s.no_drafts {
                // A Bot API server older than 9.3.
                return fail(404, "Not Found", None);
            }
            let text = args["text"].as_str().unwrap_or_default();
            if text.is_empty() || text.chars().count() > 4096 || args["draft_id"].as_u64().unwrap_or(0) == 0 {
                return fail(400, "Bad Request: invalid draft", None);
            }
            s.calls.push((method, args));
            ok(json!(true))
        }
        "setmessagereaction" => reactions::set_message_reaction(&shared, method, args),
        "getfile" => files::get_file(&shared, &args),
        "senddocument" => files::send_document(&shared, &headers, &body),
        _ => fail(404, "Not Found: method not found", None),
    }
}
