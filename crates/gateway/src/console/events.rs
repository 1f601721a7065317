//! `GET /console/events`: Server-Sent Events telling open pages what
//! changed (`runs` or `approvals`, with the id), so they re-read the part
//! they show. A page that fell behind is told both.

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

pub(crate) async fn stream(
    State(console): State<Arc<Console>>,
    _viewer: Viewer,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let rx = console.runtime.store().changes();
    let events = futures::stream::unfold((rx, Vec::<Event>::new()), |(mut rx, mut queued)| async move {
        loop {
            if let Some(e) = queued.pop() {
                return Some((Ok(e), (rx, queued)));
            }
            match rx.recv().await {
                Ok(change) => return Some((Ok(event_of(&change)), (rx, queued))),
                Err(RecvError::Lagged(_)) => {
                    queued.push(Event::default().event("approvals").data("*"));
                    queued.push(Event::default().event("runs").data("*"));
                }
                Err(RecvError::Closed) => return None,
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
