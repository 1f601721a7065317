//! `GET /console/events`: Server-Sent Events telling open pages what
//! changed (`runs` or `approvals`, with the id), so they re-read the part
//! they show. A page that fell behind is told both. The stream ends when
//! its session does (signed out, or the person may no longer sign in): it
//! is checked every few seconds while the stream is open.

use super::Console;
use super::auth::Viewer;
use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures::Stream;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use switchboard_store::Change;
use tokio::sync::broadcast::error::RecvError;

/// How often an open stream checks that its session still stands.
const RECHECK: Duration = Duration::from_secs(3);

struct Open {
    console: Arc<Console>,
    viewer: Viewer,
    rx: tokio::sync::broadcast::Receiver<Change>,
    queued: Vec<Event>,
    checked: tokio::time::Instant,
}

pub(crate) async fn stream(
    State(console): State<Arc<Console>>,
    viewer: Viewer,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let open = Open {
        rx: console.runtime.store().changes(),
        console,
        viewer,
        queued: Vec::new(),
        checked: tokio::time::Instant::now(),
    };
    let events = futures::stream::unfold(open, |mut s| async move {
        loop {
            if s.checked.elapsed() >= RECHECK {
                if !s.viewer.still_signed_in(&s.console).await {
                    tracing::info!(user = %s.viewer.user, "a console event stream ended with its session");
                    return None;
                }
                s.checked = tokio::time::Instant::now();
            }
            if let Some(e) = s.queued.pop() {
                return Some((Ok(e), s));
            }
            let wait = RECHECK.saturating_sub(s.checked.elapsed());
            match tokio::time::timeout(wait, s.rx.recv()).await {
                Err(_) => {}
                Ok(Ok(change)) => return Some((Ok(event_of(&change)), s)),
                Ok(Err(RecvError::Lagged(_))) => {
                    s.queued.push(Event::default().event("approvals").data("*"));
                    s.queued.push(Event::default().event("runs").data("*"));
                }
                Ok(Err(RecvError::Closed)) => return None,
            }
        }
    });
    Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}

/// The event a change is told as.
pub(crate) fn event_of(change: &Change) -> Event {
    match change {
        Change::Run(id) | Change::Turn(id) => Event::default().event("runs").data(id),
        Change::Approval(id) => Event::default().event("approvals").data(id),
    }
}
