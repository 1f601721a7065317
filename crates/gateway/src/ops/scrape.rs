//! `/metrics`: the counters, with what the store and the channels know
//! read at scrape time.

use super::Ops;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use switchboard_telemetry::metrics::{CONTENT_TYPE, ChannelGauge, Snapshot, render};

/// `GET /metrics`.
pub(super) async fn metrics(State(ops): State<Arc<Ops>>) -> Response {
    let store = ops.runtime.store();
    let read = async {
        let (pending, _) = store.inbox().counts().await?;
        let queued = store.outbox().pending().await?;
        let runs = store.run_tally().await?;
        Ok::<_, switchboard_store::StoreError>((pending, queued, runs))
    };
    let (inbox_pending, outbox_queued, runs) = match read.await {
        Ok(read) => read,
        Err(e) => {
            tracing::warn!(error = %e, "metrics scrape: the store did not answer");
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                format!("the store did not answer: {e}\n"),
            )
                .into_response();
        }
    };
    let channels = ops
        .channels()
        .into_iter()
        .map(|(name, owned)| ChannelGauge {
            up: !crate::cluster::is_leased(&name) || ops.health.state(&name).is_some_and(|s| s.up),
            name,
            owned,
        })
        .collect();
    let text = render(&Snapshot {
        inbox_pending,
        outbox_queued,
        runs,
        channels,
    });
    ([(header::CONTENT_TYPE, CONTENT_TYPE)], text).into_response()
}
