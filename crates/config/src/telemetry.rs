//! `[telemetry]`: what monitoring systems may read (docs/operations.md).

use serde::{Deserialize, Serialize};

/// `[telemetry]`: metrics and where they are served.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(default)]
pub struct TelemetryConfig {
    /// Count events and serve `/metrics` (Prometheus / OpenMetrics text).
    pub metrics: bool,
    /// Serve `/metrics`, `/healthz` and `/readyz` on this address of their
    /// own as well (for a scraper on another host); nothing else is
    /// served there.
    pub metrics_listen: Option<String>,
    /// Export traces over OTLP/HTTP to this collector (`http://host:4318`;
    /// spans go to `<endpoint>/v1/traces`).
    pub otlp_endpoint: Option<String>,
    /// The `service.name` traces carry.
    pub service_name: String,
}

impl Default for TelemetryConfig {
    fn default() -> Self {
        Self {
            metrics: true,
            metrics_listen: None,
            otlp_endpoint: None,
            service_name: "switchboard".into(),
        }
    }
}
