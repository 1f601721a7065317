//! `switchboard bench ...`: benchmarks that print numbers, run against the
//! gateway library (`switchboard_gateway::embed`) and the loopback peers of
//! `switchboard-test-support`. The `switchboard` binary hands `bench` to
//! [`main`] when built with its `bench` feature (docs/testing.md).

mod approvals;
mod cluster;
mod common;
mod console;
mod discord;
mod gateway;
mod matrix;
mod mcp;
mod regress;
mod stream;
mod telegram;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "switchboard bench", about = "Benchmarks that print numbers")]
struct Bench {
    #[command(subcommand)]
    which: BenchCommand,
}

#[derive(Subcommand)]
enum BenchCommand {
    /// Approval round trip with an instant approver: p50/p99.
    Approvals {
        #[arg(long, default_value_t = 1000)]
        n: usize,
    },
    /// Child completion to announcement delivered (p50/p99) and outbox throughput.
    Announce {
        #[arg(long, default_value_t = 500)]
        n: usize,
    },
    /// The Telegram adapter against a loopback Bot API: round trip and updates/s.
    Telegram {
        #[arg(long, default_value_t = 500)]
        messages: usize,
        #[arg(long, default_value_t = 200)]
        burst: usize,
        /// Then stay idle this long (with Telegram's 25 s long polls) and
        /// time the first message after it, a few times (0 skips it).
        #[arg(long, default_value_t = 60)]
        idle_secs: u64,
    },
    /// The Discord adapter against a loopback Discord (REST + gateway):
    /// round trip and messages/s.
    Discord {
        #[arg(long, default_value_t = 500)]
        messages: usize,
        #[arg(long, default_value_t = 200)]
        burst: usize,
    },
    /// The operator console: run change to SSE event with many runs live;
    /// run tree page render time with many runs recorded.
    Console {
        #[arg(long, default_value_t = 200)]
        live: usize,
        #[arg(long, default_value_t = 500)]
        changes: usize,
        #[arg(long, default_value_t = 800)]
        tree: usize,
    },
    /// A streamed answer into a Telegram private chat: first visible text
    /// after the first token, updates (drafts or edits) and messages posted.
    Stream {
        #[arg(long, default_value_t = 500)]
        words: usize,
        #[arg(long, default_value_t = 5)]
        seconds: u64,
        #[arg(long, default_value_t = 3)]
        runs: usize,
    },
    /// Three gateways on one PostgreSQL: failover time, messages/s with one
    /// and three instances, cross-instance approval latency.
    Cluster {
        /// An admin URL of a PostgreSQL server (a fresh database is made).
        #[arg(long, env = "SWITCHBOARD_TEST_POSTGRES_URL")]
        database: String,
        #[arg(long, default_value_t = 10)]
        kills: usize,
        #[arg(long, default_value_t = 200)]
        messages: usize,
        #[arg(long, default_value_t = 50)]
        approvals: usize,
    },
    /// The Matrix adapter against a real Synapse (needs ./scripts/test.sh's venv):
    /// round trip and messages/s, beside a minimal raw-API echo bot.
    Matrix {
        #[arg(long, default_value_t = 200)]
        messages: usize,
        #[arg(long, default_value_t = 200)]
        burst: usize,
        /// Rooms the burst is spread over (one conversation each).
        #[arg(long, default_value_t = 10)]
        rooms: usize,
    },
    /// The regression bench: an old and a new `switchboard` binary and the
    /// raw relay (the floor), each its own process against a loopback Bot
    /// API and an instant model, alternately; one table of medians,
    /// spreads and ratios (scripts/bench-regress.sh builds the binaries).
    Compare {
        /// The earlier build's binary.
        #[arg(long)]
        old: Option<std::path::PathBuf>,
        /// The build under test (default: this binary).
        #[arg(long)]
        new: Option<std::path::PathBuf>,
        #[arg(long, default_value_t = 3)]
        runs: usize,
        #[arg(long, default_value_t = 50)]
        sequential: usize,
        #[arg(long, default_value_t = 200)]
        burst: usize,
        #[arg(long, default_value_t = 1000)]
        big_burst: usize,
        /// Seconds of idleness measured after start-up (RSS, CPU).
        #[arg(long, default_value_t = 10)]
        idle_secs: u64,
        /// TOML added to the old build's configuration (e.g. `[telemetry]
        /// metrics = false` to measure what a feature costs with one binary);
        /// `{otlp}` becomes the address of a trace sink the bench runs.
        #[arg(long, default_value = "")]
        old_extra: String,
        /// The same for the build under test.
        #[arg(long, default_value = "")]
        new_extra: String,
        /// The floor: `raw` (the relay stores nothing), `stored` (the
        /// relay also makes the writes that let a gateway killed at any
        /// moment lose and repeat nothing, through the gateway's store) or
        /// `agent` (stored, and it sends the model the bench agent's
        /// request: its tools' schemas, a streamed answer).
        #[arg(long, value_enum, default_value_t = regress::Floor::Raw)]
        floor: regress::Floor,
    },
    /// The raw relay `compare` measures as the floor: long-poll, one model
    /// request, post the answer; nothing stored (runs until killed).
    Relay {
        #[arg(long)]
        api: String,
        #[arg(long, default_value = "123:BENCH")]
        token: String,
        #[arg(long)]
        model: String,
        /// Keep the durable-delivery rows (taken messages, queued answers,
        /// delivered marks) in a SQLite database in this folder.
        #[arg(long)]
        store: Option<std::path::PathBuf>,
        /// Send the model the request of `--agent` in this configuration
        /// (its system prompt, its tools' schemas, a streamed answer);
        /// needs `--store`.
        #[arg(long)]
        config: Option<std::path::PathBuf>,
        #[arg(long, default_value = "main")]
        agent: String,
    },
    /// MCP tool servers: a stdio call through the gateway's client against
    /// raw JSON-RPC to the same server, and idle RSS with three lazy servers.
    Mcp {
        /// `dist/index.js` of @modelcontextprotocol/server-everything
        /// (default: $SWITCHBOARD_TEST_MCP_EVERYTHING).
        #[arg(long)]
        server: Option<std::path::PathBuf>,
        #[arg(long, default_value_t = 500)]
        calls: usize,
        #[arg(long, default_value_t = 3)]
        runs: usize,
        #[arg(long, default_value_t = 5)]
        idle_secs: u64,
    },
    /// The whole gateway against an instant model: start-up, DM latency, bursts, RSS.
    Gateway {
        #[arg(long, default_value_t = 1000)]
        messages: usize,
        #[arg(long, default_value_t = 20)]
        users: usize,
    },
}

/// Run `switchboard bench <which> ...` from the process's arguments (the
/// first two, `switchboard bench`, are skipped); the exit code.
pub fn main() -> ExitCode {
    switchboard_gateway::embed::prepare_process();
    let args = std::iter::once("switchboard bench".to_string()).chain(std::env::args().skip(2));
    let bench = Bench::parse_from(args);
    switchboard_gateway::embed::init_logging("error");
    switchboard_gateway::embed::run_to_exit(run(bench.which))
}

async fn run(which: BenchCommand) -> anyhow::Result<ExitCode> {
    match which {
        BenchCommand::Approvals { n } => approvals::approvals(n).await,
        BenchCommand::Announce { n } => approvals::announcements(n).await,
        BenchCommand::Gateway { messages, users } => gateway::gateway(messages, users).await,
        BenchCommand::Telegram {
            messages,
            burst,
            idle_secs,
        } => telegram::telegram(messages, burst, idle_secs).await,
        BenchCommand::Matrix { messages, burst, rooms } => matrix::matrix(messages, burst, rooms).await,
        BenchCommand::Discord { messages, burst } => discord::discord(messages, burst).await,
        BenchCommand::Console { live, changes, tree } => console::console(live, changes, tree).await,
        BenchCommand::Stream { words, seconds, runs } => stream::stream(words, seconds, runs).await,
        BenchCommand::Compare {
            old,
            new,
            runs,
            sequential,
            burst,
            big_burst,
            idle_secs,
            old_extra,
            new_extra,
            floor,
        } => {
            let sizes = regress::Sizes {
                sequential,
                burst,
                big_burst,
                idle_secs,
            };
            let extra = (old_extra, new_extra);
            regress::compare(regress::Compare {
                old,
                new,
                runs,
                sizes,
                extra,
                floor,
            })
            .await
        }
        BenchCommand::Mcp {
            server,
            calls,
            runs,
            idle_secs,
        } => mcp::mcp(server, calls, runs, idle_secs).await,
        BenchCommand::Relay {
            api,
            token,
            model,
            store,
            config,
            agent,
        } => {
            let agent = config.as_deref().map(|c| (c, agent.as_str()));
            regress::relay::relay(&api, &token, &model, store.as_deref(), agent).await
        }
        BenchCommand::Cluster {
            database,
            kills,
            messages,
            approvals,
        } => cluster::cluster(&database, kills, messages, approvals).await,
    }
}
