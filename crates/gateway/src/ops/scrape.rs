//! `/metrics`: the counters, with what the store and the channels know
//! read at scrape time. Scrapes take turns (one renders at a time, so two
//! scrapers never see each other's half-filled gauges) and what the store
//! said is reused for `STORE_READ_EVERY`, so a flood of scrapes costs the
//! database one set of queries per interval.

use super::Ops;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use std::time::{Duration, Instant};
use switchboard_telemetry::metrics::{CONTENT_TYPE, ChannelGauge, Snapshot, render};

/// How long the store's counts are reused between scrapes.
const STORE_READ_EVERY: Duration = Duration::from_secs(2);

/// The store's part of the last snapshot, and when it was read.
#[derive(Default)]
pub(super) struct LastRead(Option<(Instant, i64, i64, RunTally)>);

/// Child runs by (kind, status, count).
type RunTally = Vec<(String, String, i64)>;

/// `GET /metrics`.
pub(super) async fn metrics(State(ops): State<Arc<Ops>>) -> Response {
    let mut last = ops.scrapes.lock().await;
    let fresh = last.0.as_ref().is_some_and(|(at, ..)| at.elapsed() < STORE_READ_EVERY);
    if !fresh {
        let store = ops.runtime.store();
        let read = async {
            let (pending, _) = store.inbox().counts().await?;
            let queued = store.outbox().pending().await?;
            let runs = store.run_tally().await?;
            Ok::<_, switchboard_store::StoreError>((pending, queued, runs))
        };
        match read.await {
            Ok((pending, queued, runs)) => last.0 = Some((Instant::now(), pending, queued, runs)),
            Err(e) => {
                tracing::warn!(error = %e, "metrics scrape: the store did not answer");
                return (StatusCode::SERVICE_UNAVAILABLE, "the store did not answer\n").into_response();
            }
        }
    }
    let Some((_, inbox_pending, outbox_queued, runs)) = last.0.clone() else {
        return (StatusCode::SERVICE_UNAVAILABLE, "no store reading yet\n").into_response();
    };
    let channels = ops
        .channels()
        .into_iter()
        .map(|(name, owned)| ChannelGauge {
            // Only what this instance runs is up here.
            up: owned && (!crate::cluster::is_leased(&name) || ops.health.state(&name).is_some_and(|s| s.up)),
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
    drop(last);
    ([(header::CONTENT_TYPE, CONTENT_TYPE)], text).into_response()
}
