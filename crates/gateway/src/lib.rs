//! The Switchboard gateway as a library: it wires configuration, the
//! store, the runtime and the channels together, and holds the command
//! line ([`cli`]). The `switchboard` binary (the workspace's root package)
//! is a thin `main` over [`cli::main`]; everything else lives in crates.

mod adapters;
pub mod allocator;
mod approvals;
mod bootstrap;
mod channels;
pub mod cli;
mod cluster;
mod commands;
mod config_digest;
mod console;
mod database_reach;
pub mod embed;
mod gateway;
mod human_time;
mod live_config;
mod messages;
mod ops;
mod reload;
mod rights;
mod routing;
mod run;
mod sandbox_report;
#[cfg(test)]
mod test_peers;
mod trace_export;
mod web;
