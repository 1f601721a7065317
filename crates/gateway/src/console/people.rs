//! The People page: who asked to be let in by pairing code, who an
//! approver let in (and who), who was refused or sent away — with Allow /
//! Deny for waiting requests and Unpair for people let in. Each action
//! goes through the same door as the chat commands (`pairing`).

use super::auth::{Acting, Viewer};
use super::view::{self, Tab};
use super::{Console, unavailable};
use crate::approvals::{Ballot, Via};
use crate::rights;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use maud::html;
use std::sync::Arc;
use switchboard_core::ApprovalChoice;
use switchboard_store::PairingStatus;

/// Rows shown.
const SHOWN: i64 = 200;

/// `GET /console/people`.
pub(crate) async fn page(State(console): State<Arc<Console>>, viewer: Viewer) -> Response {
    let config = console.runtime.config();
    let chrome = super::pages::chrome(&console, &viewer);
    if !rights::may_admit(&config, &viewer.user) {
        let body = html! { h1 { "People" } p { "Only approvers see who asked to be let in." } };
        return view::page("People", Tab::People, &chrome, body).into_response();
    }
    let rows = match console.runtime.store().pairings().recent(SHOWN).await {
        Ok(rows) => rows,
        Err(e) => return unavailable(&e),
    };
    let now = console.runtime.store().now_ms();
    let body = html! {
        h1 { "People" }
        p { "People let in by pairing code (allow lists that say \"paired\"), newest first." }
        div.scroll { table.people {
            thead { tr { th { "Person" } th { "Name" } th { "Channel" } th { "State" } th { "By" } th { "When" } th {} } }
            tbody { @for r in &rows {
                @let state = match r.status {
                    PairingStatus::Pending if r.waiting(now) => "waiting".to_string(),
                    PairingStatus::Pending => "expired".to_string(),
                    s => s.to_string(),
                };
                tr data-pairing=(r.id) {
                    td { code { (r.user_id) } }
                    td { (r.display_name) }
                    td { (r.channel) }
                    td class={ "state " (state) } { (state) }
                    td { (r.decided_by.as_deref().unwrap_or("")) }
                    td { (view::time(r.decided_at.unwrap_or(r.requested_at))) }
                    td {
                        @if r.waiting(now) {
                            button.act data-post={ "/console/people/" (r.id) "/decide" } data-body="once" { "Allow" }
                            " "
                            button.act data-post={ "/console/people/" (r.id) "/decide" } data-body="deny" { "Deny" }
                        }
                        @if r.status == PairingStatus::Paired {
                            button.act data-post="/console/people/unpair" data-body=(r.user_id) { "Unpair" }
                        }
                    }
                }
            } }
        } }
    };
    view::page("People", Tab::People, &chrome, body).into_response()
}

/// `POST /console/people/{id}/decide` with body `once` (allow) or `deny`.
pub(crate) async fn decide(
    State(console): State<Arc<Console>>,
    Acting(viewer): Acting,
    Path(id): Path<String>,
    body: String,
) -> Response {
    let Some(choice) = ApprovalChoice::from_word(body.trim()) else {
        return (StatusCode::BAD_REQUEST, "send once (allow) or deny").into_response();
    };
    if !id.starts_with(crate::messages::pairing::ID_PREFIX) {
        return (StatusCode::NOT_FOUND, format!("No pairing request '{id}'.")).into_response();
    }
    let text = console
        .router
        .pairing()
        .decide(&id, Ballot::from_console(&viewer.user, choice))
        .await;
    tracing::info!(pairing = %id, user = %viewer.user, ?choice, "pairing decided from the console");
    text.into_response()
}

/// `POST /console/people/unpair` with the person's id as the body.
pub(crate) async fn unpair(State(console): State<Arc<Console>>, Acting(viewer): Acting, body: String) -> Response {
    let target = body.trim();
    if target.is_empty() {
        return (StatusCode::BAD_REQUEST, "send the person's id (tg:42)").into_response();
    }
    let text = console
        .router
        .pairing()
        .unpair(target, &viewer.user, Via::Console)
        .await;
    let config = console.runtime.config();
    if rights::may_admit(&config, &viewer.user) {
        console.router.stop_turns_of(target, &config);
    }
    text.into_response()
}
