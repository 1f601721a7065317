//! Signing in: `/console` in a direct chat mints a one-time link (valid 10
//! minutes); opening it shows a confirmation page whose button (a POST, so
//! link previews that fetch the URL do not use it up) opens a session: an
//! HttpOnly, SameSite=Strict cookie naming the person the platform proved.
//! Pages need that session; state changes also need its CSRF token.

use super::{Console, view};
use axum::extract::{Form, FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use std::sync::Arc;
use switchboard_core::UserId;

/// How long a browser session lasts.
const SESSION_TTL_MS: i64 = 12 * 60 * 60 * 1000;
const COOKIE: &str = "sb_console";

/// A signed-in person (who may still sign in: checked at every request).
pub(crate) struct Viewer {
    pub(crate) user: UserId,
    csrf: String,
    session: String,
}

impl Viewer {
    /// The token state-changing requests must carry.
    pub(crate) fn csrf(&self) -> &str {
        &self.csrf
    }

    /// Whether this viewer's session still stands (not signed out, and the
    /// person may still sign in); `false` when the store cannot say.
    pub(crate) async fn still_signed_in(&self, console: &Console) -> bool {
        match console.runtime.store().console().session(&self.session).await {
            Ok(Some(s)) => crate::rights::may_sign_in(&console.runtime.config(), &UserId(s.user_id)),
            _ => false,
        }
    }

    /// The refusal of a state change without this session's CSRF token.
    pub(crate) fn refuse_without_csrf(&self, headers: &HeaderMap) -> Option<Response> {
        let sent = headers.get("x-csrf-token").and_then(|v| v.to_str().ok()).unwrap_or("");
        if switchboard_core::constant_time_eq(sent.as_bytes(), self.csrf.as_bytes()) {
            None
        } else {
            Some(
                (
                    StatusCode::FORBIDDEN,
                    "Refused: this request lacks the page's CSRF token. Reload the console page and try again.",
                )
                    .into_response(),
            )
        }
    }
}

/// A signed-in person making a state change: the request carried the
/// session's CSRF token (checked before the handler runs).
pub(crate) struct Acting(pub(crate) Viewer);

impl FromRequestParts<Arc<Console>> for Acting {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, console: &Arc<Console>) -> Result<Self, Response> {
        let viewer = Viewer::from_request_parts(parts, console).await?;
        match viewer.refuse_without_csrf(&parts.headers) {
            Some(refused) => Err(refused),
            None => Ok(Acting(viewer)),
        }
    }
}

fn session_cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == COOKIE)
        .map(|(_, v)| v.to_string())
}

impl FromRequestParts<Arc<Console>> for Viewer {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, console: &Arc<Console>) -> Result<Self, Response> {
        let refused = || {
            (
                StatusCode::UNAUTHORIZED,
                view::message_page(
                    "Not signed in",
                    "Send /console to the bot in a direct chat to get a sign-in link.",
                ),
            )
                .into_response()
        };
        let id = session_cookie(&parts.headers).ok_or_else(refused)?;
        let store = console.runtime.store();
        match store.console().session(&id).await {
            // Someone taken off console_users and every route since they
            // signed in is out at their next request.
            Ok(Some(s)) if !crate::rights::may_sign_in(&console.runtime.config(), &UserId(s.user_id.clone())) => {
                tracing::warn!(user = %s.user_id, "a console session of someone who may no longer sign in was ended");
                if let Err(e) = store.console().end_session(&id).await {
                    tracing::error!(error = %e, "cannot end a console session");
                }
                Err(refused())
            }
            Ok(Some(s)) => Ok(Viewer {
                user: UserId(s.user_id),
                csrf: s.csrf,
                session: id,
            }),
            Ok(None) => Err(refused()),
            Err(e) => Err(super::unavailable(&e)),
        }
    }
}

/// `GET /console/signin`: a page whose button signs in (nothing is used
/// up by opening it). The link's token is in its fragment (`#…`), which
/// browsers never send: not to this server, not to a proxy's logs, not to
/// a chat app's link preview; the page's script puts it in the form.
pub(crate) async fn confirm() -> Response {
    view::sign_in_page().into_response()
}

/// `POST /console/signout`: end this session.
pub(crate) async fn sign_out(State(console): State<Arc<Console>>, Acting(viewer): Acting) -> Response {
    if let Err(e) = console.runtime.store().console().end_session(&viewer.session).await {
        return super::unavailable(&e);
    }
    tracing::info!(user = %viewer.user, "signed out of the operator console");
    let secure = if console.secure { "; Secure" } else { "" };
    (
        [(
            header::SET_COOKIE,
            format!("{COOKIE}=; Path=/console; HttpOnly; SameSite=Strict; Max-Age=0{secure}"),
        )],
        "Signed out.",
    )
        .into_response()
}

#[derive(Deserialize)]
pub(crate) struct SignInForm {
    token: String,
}

/// `POST /console/signin`: use the link once and open a session.
pub(crate) async fn sign_in(State(console): State<Arc<Console>>, Form(form): Form<SignInForm>) -> Response {
    let store = console.runtime.store();
    let used = match store.console().use_link(&form.token).await {
        Ok(u) => u,
        Err(e) => return super::unavailable(&e),
    };
    let Some(user) = used.filter(|u| crate::rights::may_sign_in(&console.runtime.config(), &UserId(u.clone()))) else {
        return (
            StatusCode::FORBIDDEN,
            view::message_page(
                "Link not valid",
                "This sign-in link was used already or has expired. Send /console to the bot in a direct chat for a new one.",
            ),
        )
            .into_response();
    };
    let (id, _csrf) = match store.console().create_session(&user, SESSION_TTL_MS).await {
        Ok(s) => s,
        Err(e) => return super::unavailable(&e),
    };
    tracing::info!(user = %user, "signed in to the operator console");
    let secure = if console.secure { "; Secure" } else { "" };
    let cookie = format!(
        "{COOKIE}={id}; Path=/console; HttpOnly; SameSite=Strict; Max-Age={}{secure}",
        SESSION_TTL_MS / 1000
    );
    (
        StatusCode::SEE_OTHER,
        [(header::SET_COOKIE, cookie), (header::LOCATION, "/console".to_string())],
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_cookie_is_found_among_others() {
        let mut h = HeaderMap::new();
        h.insert(header::COOKIE, "a=1; sb_console=xyz; b=2".parse().unwrap());
        assert_eq!(session_cookie(&h).as_deref(), Some("xyz"));
    }
}
