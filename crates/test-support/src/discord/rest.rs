//! The REST half of the fake: `/api/v10/...` as serenity calls it through
//! its proxy setting.

use super::payloads::{self, APP_ID, Kind};
use super::{ChannelState, Shared};
use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, patch, post, put};
use axum::{Json, Router};
use serde_json::{Value, json};
use std::collections::HashMap;

pub(crate) async fn serve(listener: tokio::net::TcpListener, shared: Shared) {
    let app = Router::new()
        .route("/api/v10/gateway", get(gateway))
        .route("/api/v10/gateway/bot", get(gateway))
        .route("/api/v10/users/@me", get(me))
        .route("/api/v10/channels/{channel}", get(get_channel))
        .route(
            "/api/v10/channels/{channel}/messages",
            post(create_message).get(list_messages),
        )
        .route("/api/v10/channels/{channel}/messages/{message}", patch(edit_message))
        .route(
            "/api/v10/channels/{channel}/messages/{message}/threads",
            post(create_thread),
        )
        .route("/api/v10/channels/{channel}/typing", post(typing))
        .route(
            "/api/v10/channels/{channel}/messages/{message}/reactions/{emoji}/@me",
            put(super::reactions::add).delete(super::reactions::remove),
        )
        .route(
            "/api/v10/applications/{app}/commands",
            put(put_commands).get(get_commands),
        )
        .route("/api/v10/interactions/{id}/{token}/callback", post(callback))
        .route(
            "/api/v10/webhooks/{app}/{token}/messages/@original",
            patch(edit_original),
        )
        .route("/api/v10/webhooks/{app}/{token}", post(followup))
        .route("/cdn/attachments/{channel}/{id}/{name}", get(super::files::cdn))
        .fallback(unknown)
        .layer(axum::middleware::from_fn_with_state(shared.clone(), record))
        .with_state(shared);
    let _ = axum::serve(listener, app).await;
}

fn error(status: StatusCode, code: u32, message: &str) -> Response {
    (status, Json(json!({"code": code, "message": message}))).into_response()
}

/// Every call is recorded; calls other than gateway discovery and
/// interaction webhooks (which authenticate by their token) must carry the
/// bot token; bodies must be JSON.
async fn record(State(shared): State<Shared>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 32 << 20).await else {
        return error(StatusCode::PAYLOAD_TOO_LARGE, 40005, "Request entity too large");
    };
    let content_type = parts
        .headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let (json, bytes) = match crate::multipart::parse(&content_type, &bytes) {
        // Handlers read a multipart message as JSON, its files inside.
        Some(form) => match super::files::form(form) {
            Ok(v) => {
                let forwarded = Bytes::from(serde_json::to_vec(&v).unwrap_or_default());
                (Ok(v), forwarded)
            }
            Err(super::files::TooLarge) => {
                return error(StatusCode::PAYLOAD_TOO_LARGE, 40005, "Request entity too large");
            }
        },
        None => (json_of(&bytes), bytes),
    };
    let Ok(json) = json else {
        return error(
            StatusCode::BAD_REQUEST,
            50109,
            "The request body contains invalid JSON.",
        );
    };
    let path = parts.uri.path().to_string();
    shared.lock().calls.push((parts.method.to_string(), path.clone(), json));
    shared.changed.notify_waiters();
    let open = path.starts_with("/api/v10/gateway")
        || path.starts_with("/cdn/")
        || path.starts_with("/api/v10/webhooks/")
        || path.starts_with("/api/v10/interactions/");
    let auth = parts
        .headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if !open && !auth.starts_with("Bot ") {
        return error(StatusCode::UNAUTHORIZED, 0, "401: Unauthorized");
    }
    let mut parts = parts;
    if content_type.starts_with("multipart/") {
        parts
            .headers
            .insert("content-type", axum::http::HeaderValue::from_static("application/json"));
    }
    next.run(Request::from_parts(parts, Body::from(bytes))).await
}

fn json_of(bytes: &Bytes) -> Result<Value, serde_json::Error> {
    if bytes.is_empty() {
        Ok(Value::Null)
    } else {
        serde_json::from_slice(bytes)
    }
}

async fn unknown() -> Response {
    error(StatusCode::NOT_FOUND, 0, "404: Not Found")
}

async fn gateway(State(s): State<Shared>) -> Response {
    Json(json!({
        "url": s.ws_url, "shards": 1,
        "session_start_limit": {"total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1}
    }))
    .into_response()
}

async fn me() -> Response {
    Json(payloads::bot_user()).into_response()
}

pub(crate) fn channel_json(shared: &Shared, id: u64) -> Option<Value> {
    let s = shared.lock();
    let c = s.channels.get(&id)?;
    Some(payloads::channel(
        id,
        c.kind,
        &c.name,
        c.parent,
        c.owner,
        c.recipient.as_ref(),
    ))
}

async fn get_channel(State(s): State<Shared>, Path(channel): Path<u64>) -> Response {
    match channel_json(&s, channel) {
        Some(c) => Json(c).into_response(),
        None => error(StatusCode::NOT_FOUND, 10003, "Unknown Channel"),
    }
}

/// Discord's message content limit.
const MAX_CONTENT: usize = 2000;

async fn create_message(State(s): State<Shared>, Path(channel): Path<u64>, Json(body): Json<Value>) -> Response {
    {
        let mut st = s.lock();
        if st.rate_limited > 0 {
            st.rate_limited -= 1;
            return (
                StatusCode::TOO_MANY_REQUESTS,
                [("retry-after", "1"), ("x-ratelimit-scope", "user")],
                Json(json!({"message": "You are being rate limited.", "retry_after": 0.25, "global": false})),
            )
                .into_response();
        }
        if !st.channels.contains_key(&channel) {
            return error(StatusCode::NOT_FOUND, 10003, "Unknown Channel");
        }
        match st.failing {
            Some((0, 0)) | None => {}
            Some((0, n)) => {
                st.failing = Some((0, n - 1));
                return error(StatusCode::INTERNAL_SERVER_ERROR, 0, "500: Internal Server Error");
            }
            Some((ok, n)) => st.failing = Some((ok - 1, n)),
        }
    }
    let content = body["content"].as_str().unwrap_or("");
    if content.chars().count() > MAX_CONTENT {
        return error(
            StatusCode::BAD_REQUEST,
            50035,
            "Invalid Form Body: content: Must be 2000 or fewer in length.",
        );
    }
    let uploads = body["_uploads"].as_array().is_some_and(|u| !u.is_empty());
    if content.is_empty() && !uploads && body["components"].as_array().is_none_or(Vec::is_empty) {
        return error(StatusCode::BAD_REQUEST, 50006, "Cannot send an empty message");
    }
    let nonce = body["nonce"].as_str().map(str::to_string);
    if let (Some(n), true) = (&nonce, body["enforce_nonce"] == json!(true)) {
        let existing = s.lock().nonces.get(&(channel, n.clone())).copied();
        if let Some(id) = existing {
            let m = s
                .lock()
                .messages
                .get(&channel)
                .and_then(|v| v.iter().find(|m| m["id"] == json!(id.to_string())).cloned());
            if let Some(m) = m {
                return Json(m).into_response();
            }
        }
    }
    let id = s.id();
    let guild = s.lock().channels.get(&channel).is_some_and(|c| c.kind != Kind::Dm);
    let mut m = payloads::message(id, channel, &payloads::bot_user(), content, guild);
    m["components"] = body.get("components").cloned().unwrap_or(json!([]));
    match super::files::attach(&s, channel, &body) {
        Ok(files) => m["attachments"] = json!(files),
        Err(()) => return error(StatusCode::INTERNAL_SERVER_ERROR, 0, "500: Internal Server Error"),
    }
    m["nonce"] = json!(nonce);
    m["allowed_mentions"] = body.get("allowed_mentions").cloned().unwrap_or(Value::Null);
    {
        let mut st = s.lock();
        if let Some(n) = nonce {
            st.nonces.insert((channel, n), id);
        }
        st.messages.entry(channel).or_default().push(m.clone());
    }
    // The gateway tells the bot of its own messages too.
    s.dispatch("MESSAGE_CREATE", m.clone());
    s.changed.notify_waiters();
    Json(m).into_response()
}

async fn edit_message(
    State(s): State<Shared>,
    Path((channel, message)): Path<(u64, u64)>,
    Json(body): Json<Value>,
) -> Response {
    let mut st = s.lock();
    let Some(m) = st
        .messages
        .get_mut(&channel)
        .and_then(|v| v.iter_mut().find(|m| m["id"] == json!(message.to_string())))
    else {
        return error(StatusCode::NOT_FOUND, 10008, "Unknown Message");
    };
    for key in ["content", "components"] {
        if let Some(v) = body.get(key) {
            m[key] = v.clone();
        }
    }
    m["edited_timestamp"] = json!(payloads::timestamp());
    let out = m.clone();
    drop(st);
    s.changed.notify_waiters();
    Json(out).into_response()
}

async fn list_messages(
    State(s): State<Shared>,
    Path(channel): Path<u64>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let after: u64 = q.get("after").and_then(|a| a.parse().ok()).unwrap_or(0);
    let limit: usize = q.get("limit").and_then(|l| l.parse().ok()).unwrap_or(50).min(100);
    let st = s.lock();
    if !st.channels.contains_key(&channel) {
        return error(StatusCode::NOT_FOUND, 10003, "Unknown Channel");
    }
    let all = st.messages.get(&channel).cloned().unwrap_or_default();
    // The oldest `limit` after the id, returned newest first, as Discord does.
    let mut page: Vec<Value> = all
        .into_iter()
        .filter(|m| m["id"].as_str().and_then(|i| i.parse::<u64>().ok()).unwrap_or(0) > after)
        .take(limit)
        .collect();
    page.reverse();
    Json(page).into_response()
}

async fn create_thread(
    State(s): State<Shared>,
    Path((channel, message)): Path<(u64, u64)>,
    Json(body): Json<Value>,
) -> Response {
    let name = body["name"].as_str().unwrap_or("").to_string();
    if name.is_empty() || name.chars().count() > 100 {
        return error(
            StatusCode::BAD_REQUEST,
            50035,
            "Invalid Form Body: name: Must be between 1 and 100 in length.",
        );
    }
    if !matches!(body["auto_archive_duration"].as_u64(), Some(60 | 1440 | 4320 | 10080)) {
        return error(
            StatusCode::BAD_REQUEST,
            50035,
            "Invalid Form Body: auto_archive_duration",
        );
    }
    {
        let mut st = s.lock();
        match st.channels.get(&channel) {
            Some(c) if c.kind == Kind::Text => {}
            Some(_) => {
                return error(
                    StatusCode::BAD_REQUEST,
                    50024,
                    "Cannot execute action on this channel type",
                );
            }
            None => return error(StatusCode::NOT_FOUND, 10003, "Unknown Channel"),
        }
        let exists = st
            .messages
            .get(&channel)
            .is_some_and(|v| v.iter().any(|m| m["id"] == json!(message.to_string())));
        if !exists {
            return error(StatusCode::NOT_FOUND, 10008, "Unknown Message");
        }
        if st.channels.contains_key(&message) {
            return error(
                StatusCode::BAD_REQUEST,
                160_004,
                "A thread has already been created for this message",
            );
        }
        // A thread started from a message has the message's id.
        st.channels.insert(
            message,
            ChannelState {
                kind: Kind::Thread,
                name,
                parent: Some(channel),
                owner: Some(payloads::BOT_ID),
                recipient: None,
            },
        );
    }
    let thread = channel_json(&s, message).unwrap_or_default();
    s.dispatch("THREAD_CREATE", {
        let mut t = thread.clone();
        t["newly_created"] = json!(true);
        t
    });
    s.changed.notify_waiters();
    (StatusCode::CREATED, Json(thread)).into_response()
}

async fn typing(State(s): State<Shared>, Path(channel): Path<u64>) -> Response {
    let mut st = s.lock();
    if !st.channels.contains_key(&channel) {
        return error(StatusCode::NOT_FOUND, 10003, "Unknown Channel");
    }
    st.typing += 1;
    StatusCode::NO_CONTENT.into_response()
}

async fn put_commands(State(s): State<Shared>, Path(app): Path<u64>, Json(body): Json<Value>) -> Response {
    if app != APP_ID {
        return error(StatusCode::FORBIDDEN, 50001, "Missing Access");
    }
    let Some(list) = body.as_array() else {
        return error(StatusCode::BAD_REQUEST, 50035, "Invalid Form Body");
    };
    for c in list {
        let name = c["name"].as_str().unwrap_or("");
        let ok_name = !name.is_empty()
            && name.len() <= 32
            && name
                .chars()
                .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '-' || ch == '_');
        let desc = c["description"].as_str().unwrap_or("");
        if !ok_name || desc.is_empty() || desc.chars().count() > 100 {
            return error(StatusCode::BAD_REQUEST, 50035, "Invalid Form Body: name or description");
        }
    }
    let registered: Vec<Value> = list.iter().map(|c| payloads::registered_command(s.id(), c)).collect();
    {
        let mut st = s.lock();
        st.commands = registered.clone();
        st.command_puts += 1;
    }
    Json(registered).into_response()
}

async fn get_commands(State(s): State<Shared>) -> Response {
    Json(s.lock().commands.clone()).into_response()
}

/// The interaction whose token this is.
fn by_token(shared: &Shared, token: &str) -> Option<u64> {
    shared
        .lock()
        .interactions
        .iter()
        .find(|(_, (t, _))| t == token)
        .map(|(id, _)| *id)
}

async fn callback(
    State(s): State<Shared>,
    Path((id, token)): Path<(u64, String)>,
    Json(body): Json<Value>,
) -> Response {
    let mut st = s.lock();
    let Some((t, log)) = st.interactions.get_mut(&id) else {
        return error(StatusCode::NOT_FOUND, 10062, "Unknown interaction");
    };
    if *t != token {
        return error(StatusCode::UNAUTHORIZED, 50027, "Invalid Webhook Token");
    }
    if log.callback.is_some() {
        return error(
            StatusCode::BAD_REQUEST,
            40060,
            "Interaction has already been acknowledged.",
        );
    }
    if !matches!(body["type"].as_u64(), Some(4..=7)) {
        return error(StatusCode::BAD_REQUEST, 50035, "Invalid Form Body: type");
    }
    log.callback = Some(body);
    drop(st);
    s.changed.notify_waiters();
    StatusCode::NO_CONTENT.into_response()
}

async fn edit_original(
    State(s): State<Shared>,
    Path((app, token)): Path<(u64, String)>,
    Json(body): Json<Value>,
) -> Response {
    webhook_message(&s, app, &token, &body, true)
}

async fn followup(
    State(s): State<Shared>,
    Path((app, token)): Path<(u64, String)>,
    Json(body): Json<Value>,
) -> Response {
    webhook_message(&s, app, &token, &body, false)
}

fn webhook_message(s: &Shared, app: u64, token: &str, body: &Value, original: bool) -> Response {
    let Some(id) = by_token(s, token).filter(|_| app == APP_ID) else {
        return error(StatusCode::NOT_FOUND, 10015, "Unknown Webhook");
    };
    let content = body["content"].as_str().unwrap_or("");
    if content.chars().count() > MAX_CONTENT {
        return error(
            StatusCode::BAD_REQUEST,
            50035,
            "Invalid Form Body: content: Must be 2000 or fewer in length.",
        );
    }
    let msg_id = s.id();
    let mut m = payloads::message(msg_id, 0, &payloads::bot_user(), content, false);
    m["flags"] = body.get("flags").cloned().unwrap_or(json!(0));
    {
        let mut st = s.lock();
        let log = &mut st.interactions.get_mut(&id).expect("found above").1;
        if log.callback.is_none() {
            return error(StatusCode::NOT_FOUND, 10008, "Unknown Message");
        }
        if original {
            log.edits.push(m.clone());
        } else {
            log.followups.push(m.clone());
        }
    }
    s.changed.notify_waiters();
    Json(m).into_response()
}
