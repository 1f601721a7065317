//! Logs go to stderr through `tracing`; `RUST_LOG` (or `SWITCHBOARD_LOG`)
//! overrides the level (and the quieting of noisy dependencies),
//! `--log-format json` gives one JSON object per line. Colours only when
//! stderr is a terminal (and `NO_COLOR` is not set).

use std::io::IsTerminal;
use tracing_subscriber::EnvFilter;

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum Format {
    Text,
    Json,
}

/// matrix-sdk logs expected 404s (account data never set, rooms without
/// encryption state) and missing key backups as errors; the Matrix adapter
/// logs the failures that matter itself, with context. The MCP client
/// library logs every session's setup (with the server's whole
/// instructions) at info; the gateway says what matters about its servers.
const QUIET: &str = "matrix_sdk::http_client=off,matrix_sdk_crypto::backups=error,rmcp=warn";

pub(crate) fn init(format: Format, default_level: &str) {
    let filter = std::env::var("SWITCHBOARD_LOG")
        .ok()
        .or_else(|| std::env::var("RUST_LOG").ok())
        .unwrap_or_else(|| format!("{default_level},{QUIET}"));
    // Colour only on a terminal: a log file or a pipe gets plain text.
    let colour = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let builder = tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::new(filter))
        .with_ansi(colour)
        .with_writer(std::io::stderr);
    let _ = match format {
        Format::Text => builder.try_init(),
        Format::Json => builder.json().try_init(),
    };
}
