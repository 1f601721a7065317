//! The gateway as a library: what a program embedding it (the benchmarks in
//! `crates/bench`, a host that runs it in-process) starts and drives.
//! Everything else in this crate is private to it.

pub use crate::approvals::{Ballot, RouteBroker};
pub use crate::channels::ChannelSet;
pub use crate::cli::run_to_exit;
pub use crate::cluster::Fences;
pub use crate::gateway::Gateway;
pub use crate::live_config::LiveConfig;
pub use crate::messages::outbox::spawn as spawn_outbox;
pub use crate::run::start;

/// What the `switchboard` binary does to its process before anything
/// else (transparent huge pages off: docs/architecture.md, memory; the
/// open file limit raised to what bursts need: docs/performance.md).
pub fn prepare_process() {
    switchboard_runtime::process::disable_transparent_huge_pages();
    switchboard_runtime::process::raise_open_file_limit();
}

/// Logs to stderr as text at `level` unless `SWITCHBOARD_LOG`/`RUST_LOG`
/// say otherwise.
pub fn init_logging(level: &str) {
    crate::cli::logging::init(crate::cli::logging::Format::Text, level, None);
}
