//! `/healthz` and `/readyz`.

use super::Ops;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// How long the database may take to answer a probe.
const DATABASE_WAIT: Duration = Duration::from_secs(2);

/// `GET /healthz`: the process answers (nothing else is asked, so an
/// orchestrator does not restart a gateway whose platform is down).
pub(super) async fn healthz() -> &'static str {
    "ok\n"
}

/// Whether this instance can do its work, and what is missing if not.
#[derive(Debug, Clone)]
pub(crate) struct Readiness {
    /// `None` when the database answers with every migration applied.
    pub(crate) database: Option<String>,
    /// Each enabled channel this instance runs, with its state, and each
    /// that no instance runs (`not running`).
    pub(crate) channels: Vec<(String, &'static str)>,
}

impl Readiness {
    /// Ready: the database is fine and every channel run here connected.
    pub(crate) fn ready(&self) -> bool {
        self.database.is_none() && self.channels.iter().all(|(_, s)| *s == "connected")
    }

    fn to_json(&self) -> Value {
        let channels: serde_json::Map<String, Value> = self
            .channels
            .iter()
            .map(|(name, state)| (name.clone(), json!(state)))
            .collect();
        json!({
            "ready": self.ready(),
            "database": self.database.as_deref().unwrap_or("ok"),
            "channels": channels,
        })
    }
}

impl Ops {
    /// Ask the store and the channels' reports.
    pub(crate) async fn readiness(&self) -> Readiness {
        let database = match tokio::time::timeout(DATABASE_WAIT, self.runtime.store().check_ready()).await {
            Ok(Ok(())) => None,
            Ok(Err(why)) => Some(why.to_string()),
            Err(_) => Some(format!(
                "the database did not answer within {} s",
                DATABASE_WAIT.as_secs()
            )),
        };
        let mut channels = Vec::new();
        for (name, runs) in self.channels() {
            if !runs {
                // Another live instance runs it (this one stands by), or
                // nobody does: it failed to start here, and waits to be
                // tried again.
                if crate::cluster::is_leased(&name) && database.is_none() && !self.run_elsewhere(&name).await {
                    channels.push((name, "not running"));
                }
                continue;
            }
            // A local channel is this process's own: up while it runs.
            let state = if !crate::cluster::is_leased(&name) {
                "connected"
            } else {
                self.health.state(&name).map_or("no report yet", |s| s.label())
            };
            channels.push((name, state));
        }
        Readiness { database, channels }
    }

    /// Whether another instance holds `channel`'s lease now.
    async fn run_elsewhere(&self, channel: &str) -> bool {
        let store = self.runtime.store();
        let lease_ms = crate::cluster::instance::lease().as_millis() as i64;
        match store.leases().get(channel).await {
            Ok(Some(row)) => Some(row.owner.as_str()) != store.instance_id() && row.is_held(store.now_ms(), lease_ms),
            Ok(None) => false,
            // The database's own state is reported beside.
            Err(_) => true,
        }
    }
}

/// `GET /readyz`: 200 when ready, 503 otherwise; the body says why.
pub(super) async fn readyz(State(ops): State<Arc<Ops>>) -> Response {
    let r = ops.readiness().await;
    let code = if r.ready() {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (code, Json(r.to_json())).into_response()
}
