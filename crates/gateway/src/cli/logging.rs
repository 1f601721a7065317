//! Logs go to stderr through `tracing`; `RUST_LOG` (or `SWITCHBOARD_LOG`)
//! overrides the level (and the quieting of noisy dependencies),
//! `--log-format json` gives one JSON object per line (with the spans it
//! was logged in, a message's `trace_id` among their fields). Colours only
//! when stderr is a terminal (and `NO_COLOR` is not set). Trace export
//! (`[telemetry] otlp_endpoint`) is added once the configuration is read
//! (see [`install_traces`]).

use std::io::IsTerminal;
use switchboard_telemetry::traces::Tracer;
use tracing_subscriber::filter::FilterExt;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum Format {
    Text,
    Json,
}

/// matrix-sdk logs expected 404s (account data never set, rooms without
/// encryption state) and missing key backups as errors; the Matrix adapter
/// logs the failures that matter itself, with context. (The MCP client
/// library is never logged: see `init`.)
const QUIET: &str = "matrix_sdk::http_client=off,matrix_sdk_crypto::backups=error";

/// Set up logging; with `traces` (see `trace_export`), the gateway's
/// spans are exported as well.
pub(crate) fn init(format: Format, default_level: &str, traces: Option<Tracer>) {
    let filter = std::env::var("SWITCHBOARD_LOG")
        .ok()
        .or_else(|| std::env::var("RUST_LOG").ok())
        .unwrap_or_else(|| format!("{default_level},{QUIET}"));
    // Colour only on a terminal: a log file or a pipe gets plain text.
    let colour = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let fmt = tracing_subscriber::fmt::layer()
        .with_ansi(colour)
        .with_writer(std::io::stderr);
    let fmt = match format {
        Format::Text => fmt.boxed(),
        Format::Json => fmt.json().boxed(),
    };
    // Only the gateway's own spans at info and above, and no log events
    // (their text stays in the log).
    let ours = tracing_subscriber::filter::filter_fn(|meta| {
        meta.is_span()
            && *meta.level() <= tracing::Level::INFO
            && (meta.target().starts_with("switchboard_gateway") || meta.target().starts_with("switchboard_runtime"))
    });
    let exported = traces.map(|t| switchboard_telemetry::traces::layer(t).with_filter(ours));
    // Whatever the filter says: the MCP client library's logs quote a
    // server's whole URL, query keys included, in its errors (docs/mcp.md);
    // the gateway logs what went wrong with a server itself, the URL cut to
    // scheme, host and port.
    let no_urls = tracing_subscriber::filter::filter_fn(|meta| !meta.target().starts_with("rmcp"));
    let _ = tracing_subscriber::registry()
        .with(exported)
        .with(fmt.with_filter(EnvFilter::new(filter).and(no_urls)))
        .try_init();
}
