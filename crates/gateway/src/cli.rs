//! The `switchboard` command line: parse the arguments, start the async
//! runtime and run the subcommand.

use crate::{approvals_cmd, chat, check, logging, run, status_cmd};
use clap::{Parser, Subcommand};

use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "switchboard",
    version,
    about = "A chat-bot gateway: channels in, one agent runtime, approvals routed to operators"
)]
struct Cli {
    /// Log format on stderr.
    #[arg(long, global = true, value_enum, default_value_t = logging::Format::Text)]
    log_format: logging::Format,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Start the gateway: every enabled channel and the agent runtime.
    Run {
        #[arg(long, default_value = "config/switchboard.toml")]
        config: PathBuf,
    },
    /// Talk to an agent in this terminal (the `cli` channel).
    Chat {
        #[arg(long, default_value = "config/switchboard.toml")]
        config: PathBuf,
        /// The agent to talk to (default: the first enabled agent).
        #[arg(long)]
        agent: Option<String>,
    },
    /// Validate a configuration and print every problem with its TOML path.
    Check {
        #[arg(long, default_value = "config/switchboard.toml")]
        config: PathBuf,
    },
    /// The gateways sharing the control plane, who runs each channel, and
    /// the inbox and outbox backlog.
    Status {
        #[arg(long, default_value = "config/switchboard.toml")]
        config: PathBuf,
    },
    /// Benchmarks that print numbers (approval round trip).
    Bench {
        #[command(subcommand)]
        which: BenchCommand,
    },
    /// The approval audit trail: who decided what, when, from where.
    Approvals {
        #[arg(long, default_value = "config/switchboard.toml")]
        config: PathBuf,
        /// How many of the most recent requests to show.
        #[arg(long, default_value_t = 50)]
        limit: i64,
    },
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
    /// The whole gateway against an instant model: start-up, DM latency, bursts, RSS.
    Gateway {
        #[arg(long, default_value_t = 1000)]
        messages: usize,
        #[arg(long, default_value_t = 20)]
        users: usize,
    },
}

/// Run the `switchboard` command line; the process's exit code.
pub fn main() -> ExitCode {
    switchboard_runtime::process::disable_transparent_huge_pages();
    let cli = Cli::parse();
    // The terminal chat keeps the screen for the conversation: only errors
    // are logged there unless SWITCHBOARD_LOG asks for more.
    let level = match cli.command {
        Command::Chat { .. }
        | Command::Check { .. }
        | Command::Approvals { .. }
        | Command::Status { .. }
        | Command::Bench { .. } => "error",
        Command::Run { .. } => "info",
    };
    logging::init(cli.log_format, level);
    let rt = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = rt.block_on(async {
        match cli.command {
            Command::Check { config } => check::run(&config),
            Command::Chat { config, agent } => chat::run(&config, agent).await,
            Command::Run { config } => run::run(&config).await,
            Command::Approvals { config, limit } => approvals_cmd::run(&config, limit).await,
            Command::Status { config } => status_cmd::run(&config).await,
            Command::Bench { which } => bench_command(which).await,
        }
    });
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// `switchboard bench ...`, in builds with the `bench` feature.
#[cfg(feature = "bench")]
async fn bench_command(which: BenchCommand) -> anyhow::Result<ExitCode> {
    match which {
        BenchCommand::Approvals { n } => crate::bench::approvals(n).await,
        BenchCommand::Announce { n } => crate::bench::announcements(n).await,
        BenchCommand::Gateway { messages, users } => crate::bench::gateway(messages, users).await,
        BenchCommand::Telegram {
            messages,
            burst,
            idle_secs,
        } => crate::bench::telegram(messages, burst, idle_secs).await,
        BenchCommand::Matrix { messages, burst, rooms } => crate::bench_matrix::matrix(messages, burst, rooms).await,
        BenchCommand::Discord { messages, burst } => crate::bench_discord::discord(messages, burst).await,
        BenchCommand::Console { live, changes, tree } => crate::bench_console::console(live, changes, tree).await,
        BenchCommand::Stream { words, seconds, runs } => crate::bench_stream::stream(words, seconds, runs).await,
        BenchCommand::Cluster {
            database,
            kills,
            messages,
            approvals,
        } => crate::bench_cluster::cluster(&database, kills, messages, approvals).await,
    }
}

/// Without the `bench` feature the binary carries no test peers.
#[cfg(not(feature = "bench"))]
async fn bench_command(_: BenchCommand) -> anyhow::Result<ExitCode> {
    eprintln!(
        "this switchboard was built without benchmarks; build them with `cargo build --release --features bench`"
    );
    Ok(ExitCode::from(2))
}
