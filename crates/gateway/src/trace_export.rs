//! The process's trace exporter (`[telemetry] otlp_endpoint`): made by
//! `run` before its async runtime starts, flushed when the gateway stops.

use std::sync::OnceLock;
use switchboard_telemetry::traces::Tracer;

/// The trace exporter of this process, when `run` exports traces.
static EXPORTER: OnceLock<switchboard_telemetry::traces::Exporter> = OnceLock::new();

/// For `run`: the tracer to export spans with, when the configuration at
/// `config_path` sets `[telemetry] otlp_endpoint` (made before the async
/// runtime starts; its exporter sends from a thread of its own). A file
/// that does not load gets no tracer here; `run` reports why.
pub(crate) fn trace_export(config_path: &std::path::Path) -> Option<Tracer> {
    let config = switchboard_config::Config::load(config_path).ok()?;
    let endpoint = config.telemetry.otlp_endpoint.as_deref()?;
    match switchboard_telemetry::traces::exporter(endpoint, &config.telemetry.service_name) {
        Ok((exporter, tracer)) => {
            let _ = EXPORTER.set(exporter);
            Some(tracer)
        }
        Err(e) => {
            eprintln!("warning: traces are not exported: {e}");
            None
        }
    }
}

/// Send the spans not exported yet (a clean stop).
pub(crate) fn flush_traces() {
    if let Some(e) = EXPORTER.get() {
        e.shutdown();
    }
}
