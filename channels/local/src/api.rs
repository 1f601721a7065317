//! The loopback HTTP API of every local channel instance.

use crate::channel::{Event, LocalChannel};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::json;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use switchboard_core::{ChatAddress, Inbound, UserId};

/// Serves the local channels configured under `[channels.local.*]`.
#[derive(Clone, Default)]
pub struct LocalHub {
    channels: Arc<BTreeMap<String, Arc<LocalChannel>>>,
}

#[derive(Deserialize)]
struct Send {
    chat: String,
    #[serde(default)]
    thread: Option<String>,
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
}

#[derive(Deserialize)]
struct Press {
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
        }
    }

    pub fn channels(&self) -> impl Iterator<Item = &Arc<LocalChannel>> {
        self.channels.values()
    }

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
            .with_state(self.clone())
    }

    /// Bind `listen` and serve until the task is aborted; returns the bound address.
    pub async fn serve(&self, listen: &str) -> std::io::Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
        let listener = tokio::net::TcpListener::bind(listen).await?;
        let addr = listener.local_addr()?;
        let app = self.router();
        let task = tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                tracing::error!(error = %e, "local channel server stopped");
            }
        });
        Ok((addr, task))
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

async fn send(State(hub): State<LocalHub>, Path(alias): Path<String>, Json(body): Json<Send>) -> Response {
    let Some(ch) = hub.channel(&alias) else {
        return unknown(&alias);
    };
    if body.text.len() > MAX_TEXT {
        return bad(format!("text is {} bytes; the limit is {MAX_TEXT}", body.text.len()));
    }
    if body.chat.is_empty() || body.user.is_empty() {
        return bad("chat and user must not be empty".into());
    }
    let message_id = format!(
        "in-{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    );
    let inbound = Inbound {
        address: ChatAddress::new(format!("local.{alias}"), body.chat).with_thread(body.thread),
        sender: UserId(body.user.clone()),
        sender_name: body.name.unwrap_or(body.user),
        text: body.text,
        message_id: Some(message_id.clone()),
        mentioned: body.mentioned,
        direct: body.direct,
        reply_to: body.reply_to,
    };
    match ch.receive(inbound).await {
        Ok(()) => (StatusCode::ACCEPTED, Json(json!({ "message_id": message_id }))).into_response(),
        Err(e) => (StatusCode::SERVICE_UNAVAILABLE, Json(json!({"error": e.to_string()}))).into_response(),
    }
}

async fn press(State(hub): State<LocalHub>, Path(alias): Path<String>, Json(body): Json<Press>) -> Response {
    let Some(ch) = hub.channel(&alias) else {
        return unknown(&alias);
    };
    // A button press reaches the gateway as the equivalent text command.
    let text = match body.choice.as_str() {
        "allow_once" => format!("/approve {}", body.approval_id),
        "always" => format!("/approve {} always", body.approval_id),
        "deny" => format!("/deny {}", body.approval_id),
        other => return bad(format!("unknown choice '{other}'; use allow_once, always or deny")),
    };
    let inbound = Inbound {
        address: ChatAddress::new(format!("local.{alias}"), body.chat).with_thread(body.thread),
        sender: UserId(body.user.clone()),
        sender_name: body.user,
        text,
        message_id: None,
        mentioned: true,
        direct: false,
        reply_to: None,
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

async fn events(State(hub): State<LocalHub>, Path(alias): Path<String>, Query(q): Query<Poll>) -> Response {
    let Some(ch) = hub.channel(&alias) else {
        return unknown(&alias);
    };
    let wait = Duration::from_millis(q.wait_ms.min(30_000));
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let notified = ch.notify.notified();
        let found: Vec<Event> = ch.events_after(q.after);
        if !found.is_empty() || tokio::time::Instant::now() >= deadline {
            return Json(json!({ "events": found })).into_response();
        }
        let _ = tokio::time::timeout_at(deadline, notified).await;
    }
}
