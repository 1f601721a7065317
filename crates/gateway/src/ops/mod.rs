//! What orchestrators and monitoring systems read (docs/operations.md):
//! `/healthz` (the process answers), `/readyz` (the database is reachable
//! and migrated, and every channel this instance runs is connected) and
//! `/metrics` (OpenMetrics text for Prometheus). Served on `[web].listen`
//! beside the local API and, with `[telemetry] metrics_listen`, on a
//! listener of their own.

mod ready;
mod scrape;

use crate::channels::HealthBoard;
use crate::cluster::Fences;
use axum::routing::get;
use std::sync::Arc;

/// What the endpoints read: the store and configuration (through the
/// runtime), the channels' connection reports and the leases held.
pub(crate) struct Ops {
    runtime: switchboard_runtime::Runtime,
    health: Arc<HealthBoard>,
    fences: Fences,
    /// One scrape at a time, with the store's last answer (see `scrape`).
    scrapes: tokio::sync::Mutex<scrape::LastRead>,
}

impl Ops {
    pub(crate) fn new(runtime: switchboard_runtime::Runtime, health: Arc<HealthBoard>, fences: Fences) -> Self {
        Self {
            runtime,
            health,
            fences,
            scrapes: tokio::sync::Mutex::default(),
        }
    }

    /// The enabled channels this instance is configured with, and whether
    /// it runs each now (a leased channel may be another instance's).
    fn channels(&self) -> Vec<(String, bool)> {
        self.runtime
            .config()
            .channels
            .instances()
            .into_iter()
            .filter(|(_, enabled)| *enabled)
            .map(|(name, _)| {
                let runs = self.fences.runs(&name);
                (name, runs)
            })
            .collect()
    }

    /// The routes, for a listener.
    pub(crate) fn routes(self: Arc<Self>) -> axum::Router {
        let mut routes = axum::Router::new()
            .route("/healthz", get(ready::healthz))
            .route("/readyz", get(ready::readyz));
        if switchboard_telemetry::metrics::enabled() {
            routes = routes.route("/metrics", get(scrape::metrics));
        }
        routes.with_state(self)
    }
}
