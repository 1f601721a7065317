//! The loopback HTTP API of every local channel instance.

use crate::access;
use crate::channel::{Event, LocalChannel};
use axum::extract::{ConnectInfo, Extension, Path, Query, Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::json;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use switchboard_core::{Action, ApprovalChoice, ChatAddress, Inbound, UserId};

/// Serves the local channels configured under `[channels.local.*]`.
#[derive(Clone, Default)]
pub struct LocalHub {
    channels: Arc<BTreeMap<String, Arc<LocalChannel>>>,
    /// Bearer tokens of the aliases that require one.
    tokens: Arc<BTreeMap<String, String>>,
    /// Per alias, each person's token and `cli:` name.
    people: Arc<BTreeMap<String, Vec<(String, String)>>>,
}

/// Who the request's token says is calling (people by token), if anyone.
#[derive(Clone, Default)]
struct Caller(Option<String>);

#[derive(Deserialize)]
pub(crate) struct Send {
    chat: String,
    #[serde(default)]
    thread: Option<String>,
    /// Who writes (`cli:<name>`); with people by token, the token decides.
    #[serde(default)]
    user: String,
    #[serde(default)]
    name: Option<String>,
    text: String,
    #[serde(default)]
    mentioned: bool,
    #[serde(default)]
    direct: bool,
    #[serde(default)]
    reply_to: Option<String>,
    /// Files sent with the message.
    #[serde(default)]
    files: Vec<crate::files::LocalFile>,
}

#[derive(Deserialize)]
struct Press {
    #[serde(default)]
    user: String,
    chat: String,
    #[serde(default)]
    thread: Option<String>,
    approval_id: String,
    choice: String,
}

#[derive(Deserialize)]
struct Outage {
    down: bool,
}

#[derive(Deserialize)]
struct Poll {
    #[serde(default)]
    after: u64,
    #[serde(default)]
    wait_ms: u64,
}

const MAX_TEXT: usize = 64 * 1024;

impl LocalHub {
    /// A hub for these aliases (`ops` for `local.ops`).
    pub fn new(aliases: &[String]) -> Self {
        let channels = aliases
            .iter()
            .map(|a| (a.clone(), Arc::new(LocalChannel::new(a))))
            .collect();
        Self {
            channels: Arc::new(channels),
            tokens: Arc::default(),
            people: Arc::default(),
        }
    }

    /// Know the callers of these aliases by token: `alias → [(token, name)]`
    /// (`name` without the `cli:`).
    pub fn with_people(mut self, people: BTreeMap<String, Vec<(String, String)>>) -> Self {
        let people = people
            .into_iter()
            .map(|(alias, list)| (alias, list.into_iter().map(|(t, n)| (t, format!("cli:{n}"))).collect()))
            .collect();
        self.people = Arc::new(people);
        self
    }

    /// Require `Authorization: Bearer <token>` on these aliases.
    pub fn with_tokens(mut self, tokens: BTreeMap<String, String>) -> Self {
        self.tokens = Arc::new(tokens);
        self
    }

    /// Every local channel of the hub.
    pub fn channels(&self) -> impl Iterator<Item = &Arc<LocalChannel>> {
        self.channels.values()
    }

    /// The channel `local.<alias>`, if configured.
    pub fn channel(&self, alias: &str) -> Option<&Arc<LocalChannel>> {
        self.channels.get(alias)
    }

    /// The HTTP routes, to be served on loopback.
    pub fn router(&self) -> Router {
        Router::new()
            .route("/local/{alias}/send", post(send))
            .route("/local/{alias}/press", post(press))
            .route("/local/{alias}/events", get(events))
            .route("/local/{alias}/outage", post(outage))
            .route_layer(middleware::from_fn_with_state(self.clone(), guard))
            .with_state(self.clone())
    }
}

fn unknown(alias: &str) -> Response {
    (
        StatusCode::NOT_FOUND,
        Json(json!({"error": format!("no local channel '{alias}'; configure [channels.local.{alias}]")})),
    )
        .into_response()
}

fn bad(msg: String) -> Response {
    (StatusCode::BAD_REQUEST, Json(json!({ "error": msg }))).into_response()
}

/// Refuse what did not come from this machine's own callers (see `access`).
async fn guard(
    State(hub): State<LocalHub>,
    Path(params): Path<BTreeMap<String, String>>,
    req: Request,
    next: Next,
) -> Response {
    let alias = params.get("alias");
    // The peer must be this machine (fail closed when it is not known):
    // the owner-only UNIX socket, or loopback TCP — where only channels
    // that know their people by token are served.
    let unix = req.extensions().get::<ConnectInfo<access::UnixPeer>>().is_some();
    if !unix {
        let peer = req.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0);
        if !peer.is_some_and(|p| p.ip().is_loopback()) {
            tracing::warn!(?peer, "local API request from another machine refused");
            let error = "the local API answers only callers on this machine";
            return (StatusCode::FORBIDDEN, Json(json!({ "error": error }))).into_response();
        }
        if let Some(alias) = alias
            && !hub.people.contains_key(alias)
        {
            tracing::warn!(%alias, "local API request over TCP to a channel without people tokens refused");
            let error = format!(
                "local channel '{alias}' is served on the gateway's UNIX socket ([web].socket) only: over TCP, a channel must know its people by token ([channels.local.{alias}.people])"
            );
            return (StatusCode::FORBIDDEN, Json(json!({ "error": error }))).into_response();
        }
    }
    let token = alias.and_then(|a| hub.tokens.get(a)).map(String::as_str);
    if let Some((status, error)) = access::refusal(req.headers(), token) {
        tracing::warn!(%error, "local API request refused");
        let status = StatusCode::from_u16(status).unwrap_or(StatusCode::FORBIDDEN);
        return (status, Json(json!({ "error": error }))).into_response();
    }
    let mut req = req;
    let caller = match alias.and_then(|a| hub.people.get(a).map(|p| (a, p))) {
        Some((alias, people)) => match access::person(req.headers(), people) {
            Some(name) => Caller(Some(name)),
            None => {
                let error = format!(
                    "this local channel knows its people by token: send 'Authorization: Bearer <your token>' from [channels.local.{alias}.people]"
                );
                tracing::warn!(%alias, "local API request without a person's token refused");
                return (StatusCode::UNAUTHORIZED, Json(json!({ "error": error }))).into_response();
            }
        },
        None => Caller(None),
    };
    req.extensions_mut().insert(caller);
    next.run(req).await
}

/// What a person wrote, as a message for the gateway; or what to fix.
pub(crate) fn inbound_of(
    alias: &str,
    body: Send,
    message_id: String,
    uploads: &crate::files::Uploads,
) -> Result<Inbound, String> {
    if body.text.len() > MAX_TEXT {
        return Err(format!("text is {} bytes; the limit is {MAX_TEXT}", body.text.len()));
    }
    if body.chat.is_empty() {
        return Err("chat must not be empty".into());
    }
    access::check_user(&body.user)?;
    let attachments = uploads.keep(&message_id, body.files)?;
    Ok(Inbound {
        address: ChatAddress::new(format!("local.{alias}"), body.chat).with_thread(body.thread),
        sender: UserId(body.user.clone()),
        sender_name: body.name.unwrap_or(body.user),
        text: body.text,
        message_id: Some(message_id),
        event_id: None,
        mentioned: body.mentioned,
        direct: body.direct,
        reply_to: body.reply_to,
        guild: None,
        attachments,
        action: Action::Text,
    })
}

/// The `cli:` name a request acts as: the token's person (a different
/// `user` in the body is refused), or the body's `user` without people.
fn acting_as(caller: &Caller, claimed: &str) -> Result<String, Box<Response>> {
    match &caller.0 {
        Some(person) if !claimed.is_empty() && claimed != person => Err(Box::new(
            (
                StatusCode::FORBIDDEN,
                Json(json!({"error": format!("your token says you are {person}; leave 'user' out or set it to that")})),
            )
                .into_response(),
        )),
        Some(person) => Ok(person.clone()),
        None => Ok(claimed.to_string()),
    }
}

/// Channel `alias` and the person a caller speaks as there (see
/// `acting_as`); a caller with a token joins `chat` first (a direct chat
/// when `direct`). The response to send instead when any of it is refused.
fn speaker(
    hub: &LocalHub,
    alias: &str,
    caller: &Caller,
    claimed: &str,
    chat: &str,
    direct: bool,
) -> Result<(Arc<LocalChannel>, String), Box<Response>> {
    let Some(ch) = hub.channel(alias) else {
        return Err(Box::new(unknown(alias)));
    };
    let user = acting_as(caller, claimed)?;
    if caller.0.is_some()
        && let Err(e) = ch.join(chat, &user, direct)
    {
        return Err(Box::new(
            (StatusCode::FORBIDDEN, Json(json!({ "error": e }))).into_response(),
        ));
    }
    Ok((ch.clone(), user))
}

async fn send(
    State(hub): State<LocalHub>,
    Path(alias): Path<String>,
    Extension(caller): Extension<Caller>,
    Json(mut body): Json<Send>,
) -> Response {
    let (ch, user) = match speaker(&hub, &alias, &caller, &body.user, &body.chat, body.direct) {
        Ok(found) => found,
        Err(refused) => return *refused,
    };
    body.user = user;
    let message_id = format!(
        "in-{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    );
    let inbound = match inbound_of(&alias, body, message_id.clone(), &ch.uploads) {
        Ok(i) => i,
        Err(e) => return bad(e),
    };
    match ch.receive(inbound).await {
        Ok(()) => (StatusCode::ACCEPTED, Json(json!({ "message_id": message_id }))).into_response(),
        Err(e) => (StatusCode::SERVICE_UNAVAILABLE, Json(json!({"error": e.to_string()}))).into_response(),
    }
}

async fn press(
    State(hub): State<LocalHub>,
    Path(alias): Path<String>,
    Extension(caller): Extension<Caller>,
    Json(mut body): Json<Press>,
) -> Response {
    let (ch, user) = match speaker(&hub, &alias, &caller, &body.user, &body.chat, false) {
        Ok(found) => found,
        Err(refused) => return *refused,
    };
    body.user = user;
    // A button press reaches the gateway as a decision, never as text.
    let Some(choice) = ApprovalChoice::from_word(&body.choice) else {
        return bad(format!(
            "unknown choice '{}'; use allow_once, always or deny",
            body.choice
        ));
    };
    let id = &body.approval_id;
    if id.is_empty() || id.len() > 64 || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        return bad("approval_id must be the request's id (letters, digits and '-', at most 64)".into());
    }
    if let Err(e) = access::check_user(&body.user) {
        return bad(e);
    }
    let address = ChatAddress::new(format!("local.{alias}"), body.chat).with_thread(body.thread);
    let inbound = Inbound {
        mentioned: true,
        action: Action::Decide {
            approval: body.approval_id,
            choice,
        },
        ..Inbound::new(address, UserId(body.user), "")
    };
    match ch.receive(inbound).await {
        Ok(()) => StatusCode::ACCEPTED.into_response(),
        Err(e) => (StatusCode::SERVICE_UNAVAILABLE, Json(json!({"error": e.to_string()}))).into_response(),
    }
}

/// Simulate a platform outage: while down, everything the gateway sends
/// to this channel fails as a transient error (for trying out retries and
/// durable delivery).
async fn outage(State(hub): State<LocalHub>, Path(alias): Path<String>, Json(body): Json<Outage>) -> Response {
    let Some(ch) = hub.channel(&alias) else {
        return unknown(&alias);
    };
    ch.set_down(body.down);
    StatusCode::NO_CONTENT.into_response()
}

async fn events(
    State(hub): State<LocalHub>,
    Path(alias): Path<String>,
    Extension(caller): Extension<Caller>,
    Query(q): Query<Poll>,
) -> Response {
    let Some(ch) = hub.channel(&alias) else {
        return unknown(&alias);
    };
    let wait = Duration::from_millis(q.wait_ms.min(30_000));
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let notified = ch.notify.notified();
        let mut found: Vec<Event> = ch.events_after(q.after);
        // People by token see only the chats they are in.
        if let Some(person) = &caller.0 {
            found.retain(|e| ch.sees(person, e));
        }
        if !found.is_empty() || tokio::time::Instant::now() >= deadline {
            return Json(json!({ "events": found })).into_response();
        }
        let _ = tokio::time::timeout_at(deadline, notified).await;
    }
}

/// Whatever a local caller sends, turning it into a message never panics
/// and admits `cli:` people only.
#[cfg(test)]
mod never_panics {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn any_request(
            chat in any::<String>(),
            thread in proptest::option::of(any::<String>()),
            user in prop_oneof![any::<String>(), any::<String>().prop_map(|s| format!("cli:{s}")), Just("tg:1".to_string())],
            text in any::<String>(),
            name in proptest::option::of(any::<String>()),
        ) {
            let body = Send { chat: chat.clone(), thread, user: user.clone(), name, text: text.clone(), mentioned: true, direct: false, reply_to: None, files: Vec::new() };
            let m = inbound_of("team", body, "in-1".into(), &crate::files::Uploads::default());
            let valid = !chat.is_empty() && access::check_user(&user).is_ok();
            prop_assert_eq!(m.is_ok(), valid);
            if let Ok(m) = m {
                prop_assert_eq!(m.text, text);
                prop_assert_eq!(m.sender.as_str(), user.as_str());
            }
        }
    }
}
