//! The operator console (docs/console.md): server-rendered pages on the
//! `[web]` listener showing the run tree, approvals, costs and health, kept
//! live over Server-Sent Events. It reads the control plane through the
//! store, running turns through the router, and acts only through the same
//! doors chat commands use (the approval broker, `kill_tree`, the pause
//! flag), so a decision made here edits the chat prompt and is audited
//! exactly like one made in chat (with `from = console`).
//!
//! Security: off unless `[web] console = true`; every request must name the
//! configured host (DNS rebinding); pages need a session opened with a
//! one-time link that `/console` sends in a direct chat; state changes need
//! the session's CSRF token; who may decide or kill is checked per request.

mod actions;
mod auth;
mod events;
mod pages;
mod people;
mod tree;
mod view;

pub(crate) use crate::channels::HealthBoard;

use crate::approvals::RouteBroker;
use crate::messages::router::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use std::sync::Arc;
use switchboard_runtime::Runtime;

/// What the console's handlers share.
pub(crate) struct Console {
    pub(crate) runtime: Runtime,
    pub(crate) broker: Arc<RouteBroker>,
    pub(crate) router: Arc<Router>,
    pub(crate) health: Arc<HealthBoard>,
    /// `Host` values requests may carry.
    hosts: Vec<String>,
    /// Cookies get `Secure` when the console is reached over https.
    secure: bool,
}

impl Console {
    pub(crate) fn new(
        runtime: Runtime,
        broker: Arc<RouteBroker>,
        router: Arc<Router>,
        health: Arc<HealthBoard>,
    ) -> Self {
        let web = &runtime.config().web;
        let mut hosts = Vec::new();
        for listen in web.listen.iter().chain(web.console_listen.as_ref()) {
            hosts.push(listen.clone());
            if let Some(port) = listen.rsplit_once(':').map(|(_, p)| p) {
                hosts.push(format!("localhost:{port}"));
            }
        }
        if let Some(url) = &web.public_url {
            let rest = url.split_once("://").map_or(url.as_str(), |(_, r)| r);
            hosts.push(rest.split('/').next().unwrap_or_default().to_string());
        }
        let secure = web.public_url.as_deref().is_some_and(|u| u.starts_with("https://"));
        Self {
            runtime,
            broker,
            router,
            health,
            hosts,
            secure,
        }
    }

    /// The console's routes, to be merged into the `[web]` server.
    pub(crate) fn routes(self: Arc<Self>) -> axum::Router {
        axum::Router::new()
            .route("/console", get(pages::runs))
            .route("/console/fragment/runs", get(pages::runs_fragment))
            .route("/console/runs/{id}", get(pages::run))
            .route("/console/approvals", get(pages::approvals))
            .route("/console/fragment/approvals", get(pages::approvals_fragment))
            .route("/console/costs", get(pages::costs))
            .route("/console/health", get(pages::health))
            .route("/console/people", get(people::page))
            .route("/console/people/{id}/decide", post(people::decide))
            .route("/console/people/unpair", post(people::unpair))
            .route("/console/events", get(events::stream))
            .route("/console/signin", get(auth::confirm).post(auth::sign_in))
            .route("/console/signout", post(auth::sign_out))
            .route("/console/approvals/{id}/decide", post(actions::decide))
            .route("/console/runs/{id}/kill", post(actions::kill))
            .route("/console/spawning", post(actions::spawning))
            .route("/console/turns/stop", post(actions::stop_turn))
            .route("/console/assets/console.css", get(assets_css))
            .route("/console/assets/console.js", get(assets_js))
            .layer(middleware::from_fn_with_state(self.clone(), host_guard))
            .layer(middleware::from_fn(security_headers))
            .with_state(self)
    }

    /// Whether `headers` name a host this console answers to.
    fn host_ok(&self, headers: &HeaderMap) -> bool {
        headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .is_some_and(|h| self.hosts.iter().any(|ok| ok.eq_ignore_ascii_case(h)))
    }
}

/// Refuse requests for another host (a rebinding page in someone's
/// browser must not reach a console on their loopback).
async fn host_guard(State(console): State<Arc<Console>>, request: Request, next: Next) -> Response {
    if !console.host_ok(request.headers()) {
        return (
            StatusCode::FORBIDDEN,
            "Refused: this request names another host. Open the console at the address [web].public_url (or [web].listen) gives.",
        )
            .into_response();
    }
    next.run(request).await
}

/// Every console answer: never inside a frame (clickjacking), scripts and
/// styles only from the console itself, no referrer leaving it.
async fn security_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    for (name, value) in [
        (
            "content-security-policy",
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
        ),
        ("x-frame-options", "DENY"),
        ("referrer-policy", "no-referrer"),
        ("x-content-type-options", "nosniff"),
    ] {
        headers.insert(name, header::HeaderValue::from_static(value));
    }
    response
}

/// A control plane that cannot be read or written, as an answer.
pub(super) fn unavailable(e: &switchboard_store::StoreError) -> Response {
    tracing::error!(error = %e, "the console cannot use the control plane");
    (
        StatusCode::SERVICE_UNAVAILABLE,
        "The control plane cannot be used right now; try again in a moment.",
    )
        .into_response()
}

async fn assets_css() -> Response {
    (
        [(header::CONTENT_TYPE, "text/css; charset=utf-8")],
        include_str!("assets/console.css"),
    )
        .into_response()
}

async fn assets_js() -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        include_str!("assets/console.js"),
    )
        .into_response()
}
