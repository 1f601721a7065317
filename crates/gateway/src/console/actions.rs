//! The console's state changes (POST handlers). Each needs a session and
//! its CSRF token (the `Acting` extractor), checks the viewer's rights (see `rights`), and then
//! goes through the same door as the chat command: the approval broker,
//! `kill_tree`, the shared pause flag.

use super::auth::Acting;
use super::{Console, unavailable};
use crate::approvals::Ballot;
use crate::rights;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use switchboard_core::ApprovalChoice;

fn forbidden(text: String) -> Response {
    (StatusCode::FORBIDDEN, text).into_response()
}

/// `POST /console/approvals/{id}/decide` with body `once`, `always` or `deny`.
pub(crate) async fn decide(
    State(console): State<Arc<Console>>,
    Acting(viewer): Acting,
    Path(id): Path<String>,
    body: String,
) -> Response {
    let Some(choice) = ApprovalChoice::from_word(body.trim()) else {
        return (
            StatusCode::BAD_REQUEST,
            format!("unknown choice '{}'; send once, always or deny", body.trim()),
        )
            .into_response();
    };
    match console.runtime.store().approvals().get(&id).await {
        Ok(Some(row)) if !rights::may_decide(&viewer.user, &rights::approvers_of(&row)) => {
            return forbidden(format!(
                "{} may not decide approval {id}: only its approvers can. The request stays open.",
                viewer.user
            ));
        }
        Ok(Some(_)) => {}
        Ok(None) => return (StatusCode::NOT_FOUND, format!("No approval request '{id}'.")).into_response(),
        Err(e) => return unavailable(&e),
    }
    let text = console
        .broker
        .decide(&id, Ballot::from_console(&viewer.user, choice))
        .await;
    tracing::info!(approval = %id, user = %viewer.user, ?choice, "decided from the console");
    text.into_response()
}

/// `POST /console/runs/{id}/kill`: stop a run and its children.
pub(crate) async fn kill(
    State(console): State<Arc<Console>>,
    Acting(viewer): Acting,
    Path(id): Path<String>,
) -> Response {
    let row = match console.runtime.store().runs().get(&id).await {
        Ok(Some(r)) => r,
        Ok(None) => return (StatusCode::NOT_FOUND, format!("No run '{id}'.")).into_response(),
        Err(e) => return unavailable(&e),
    };
    if !rights::may_kill(&console.runtime.config(), &viewer.user, &rights::RunOwner::of(&row)) {
        return forbidden(format!(
            "{} may not kill run {id}: it was started by {}, and only an approver may stop someone else's runs.",
            viewer.user,
            row.requester.as_deref().unwrap_or("someone else")
        ));
    }
    let killed = console
        .runtime
        .core()
        .kill_tree(vec![row], &format!("killed by {} from the console", viewer.user))
        .await;
    if killed.is_empty() {
        "Nothing to kill: the run is not running any more.".into_response()
    } else {
        format!("Killed {} run(s): {}.", killed.len(), killed.join(", ")).into_response()
    }
}

/// `POST /console/turns/stop` with a session key as body: stop the turn
/// running in that session and the children it started, as `/stop` does
/// (its owner may; an approver of its agent may stop anyone's).
pub(crate) async fn stop_turn(State(console): State<Arc<Console>>, Acting(viewer): Acting, body: String) -> Response {
    let session_key = body.trim();
    let Some(turn) = console.router.current_turn(session_key) else {
        return (StatusCode::NOT_FOUND, "No turn is running in that session.").into_response();
    };
    let config = &console.runtime.config();
    let operator = rights::operates(config, &viewer.user, &turn.agent);
    if !rights::may_stop(config, &viewer.user, &turn.owner, &turn.agent) {
        return forbidden(format!(
            "{} may not stop this turn: {} asked for it, and only an approver may stop someone else's work.",
            viewer.user, turn.owner
        ));
    }
    turn.cancel.cancel();
    let children = crate::commands::stop_session_children(&console.runtime, session_key, &viewer.user, operator).await;
    format!("Stopped the turn and {children} child session(s).").into_response()
}

/// `POST /console/spawning` with body `pause` or `resume`.
pub(crate) async fn spawning(State(console): State<Arc<Console>>, Acting(viewer): Acting, body: String) -> Response {
    if !rights::may_pause(&console.runtime.config(), &viewer.user, rights::PauseScope::All) {
        return forbidden(format!(
            "{} may not pause or resume delegation for every agent: only an approver of every agent may.",
            viewer.user
        ));
    }
    let pause = match body.trim() {
        "pause" => true,
        "resume" => false,
        other => {
            return (
                StatusCode::BAD_REQUEST,
                format!("unknown action '{other}'; send pause or resume"),
            )
                .into_response();
        }
    };
    crate::commands::subagents::set_paused(&console.runtime, rights::PauseScope::All, pause)
        .await
        .into_response()
}
