//! The Switchboard gateway as a library: it wires configuration, the
//! store, the runtime and the channels together, and holds the command
//! line ([`cli`]). The `switchboard` binary (the workspace's root package)
//! is a thin `main` over [`cli::main`]; everything else lives in crates.

mod adapters;
mod approvals;
mod approvals_cmd;
mod bootstrap;
mod channels;
mod chat;
mod chat_stream;
mod check;
pub mod cli;
mod cli_broker;
mod cli_channel;
mod cluster;
mod commands;
mod console;
pub mod embed;
mod fence;
mod files;
mod inbox;
mod instance;
mod logging;
mod outbox;
mod reply;
mod rights;
mod router;
mod run;
mod sandbox_report;
mod status_cmd;
mod stream_out;
mod taken;
mod terminal_text;
#[cfg(test)]
mod test_peers;
mod web;
