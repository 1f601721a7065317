//! `/metrics`: the counters, with what the store and the channels know
//! read at scrape time. Scrapes take turns (one renders at a time, so two
//! scrapers never see each other's half-filled gauges) and what the store
//! said is reused for `STORE_READ_EVERY`, so a flood of scrapes costs the
//! database one set of queries per interval.

use super::Ops;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use std::time::{Duration, Instant};
use switchboard_telemetry::metrics::{CONTENT_TYPE, ChannelGauge, Snapshot, render};

/// How long the store's counts are reused between scrapes.
const STORE_READ_EVERY: Duration = Duration::from_secs(2);

/// The store's part of the last snapshot: when it was last asked,
/// whether it answered, and the last counts it gave.
#[derive(Default)]
pub(super) struct LastRead {
    asked: Option<Instant>,
    answered: bool,
    counts: (i64, i64, RunTally),
}

/// Child runs by (kind, status, count).
type RunTally = Vec<(String, String, i64)>;

/// `GET /metrics`. While the database is away the counters are still
/// served, with `database_up` 0 and the last control-plane counts read
/// (asked again at most every `STORE_READ_EVERY`).
pub(super) async fn metrics(State(ops): State<Arc<Ops>>) -> Response {
    let mut last = ops.scrapes.lock().await;
    if last.asked.is_none_or(|at| at.elapsed() >= STORE_READ_EVERY) {
        let store = ops.runtime.store();
        let read = async {
            let (pending, _) = store.inbox().counts().await?;
            let queued = store.outbox().pending().await?;
            let runs = store.run_tally().await?;
            Ok::<_, switchboard_store::StoreError>((pending, queued, runs))
        };
        let got = read.await;
        last.asked = Some(Instant::now());
        last.answered = got.is_ok();
        match got {
            Ok(counts) => last.counts = counts,
            Err(e) => tracing::warn!(error = %e, "metrics scrape: the store did not answer"),
        }
    }
    let (inbox_pending, outbox_queued, runs) = last.counts.clone();
    let database_up = last.answered;
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
        database_up,
    });
    drop(last);
    ([(header::CONTENT_TYPE, CONTENT_TYPE)], text).into_response()
}
