//! The `switchboard` command line: parse the arguments, start the async
//! runtime and run the subcommand.

mod approvals;
mod backup;
pub(crate) mod chat;
mod check;
mod doctor;
mod init;
pub(crate) mod logging;
mod migrate;
mod reload;
mod status;
mod toml_text;

use crate::run;
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
    /// Write a first configuration: a few questions (or their flags), each
    /// answer checked at once (docs/getting-started.md).
    Init(Box<init::InitArgs>),
    /// Move an OpenClaw or Hermes Agent setup over: a plan first, then a
    /// new configuration (docs/getting-started.md).
    Migrate(migrate::MigrateArgs),
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
        /// Also start each enabled MCP server once and list its tools.
        #[arg(long)]
        probe: bool,
    },
    /// The gateways sharing the control plane, who runs each channel, and
    /// the inbox and outbox backlog.
    Status {
        #[arg(long, default_value = "config/switchboard.toml")]
        config: PathBuf,
    },
    /// Benchmarks that print numbers (in builds with `--features bench`).
    Bench {
        /// The benchmark and its options (`switchboard bench --help`).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Ask the gateways on this host to apply their configuration file
    /// again (SIGHUP): allow lists, agents, routes, approvers, providers,
    /// cron and channel tables, without a restart.
    Reload {
        #[arg(long, default_value = "config/switchboard.toml")]
        config: PathBuf,
    },
    /// Try everything the gateway depends on (database, model providers,
    /// channel credentials, sandbox, MCP servers) and say what to fix.
    Doctor {
        #[arg(long, default_value = "config/switchboard.toml")]
        config: PathBuf,
    },
    /// Write a checked copy of the embedded (SQLite) database to PATH while
    /// the gateway runs.
    Backup {
        #[arg(long, default_value = "config/switchboard.toml")]
        config: PathBuf,
        /// The new file (it must not exist).
        path: PathBuf,
    },
    /// Put a backup back in place of the database (the gateway must be
    /// stopped; the old file is kept beside it).
    Restore {
        #[arg(long, default_value = "config/switchboard.toml")]
        config: PathBuf,
        /// The backup file.
        path: PathBuf,
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

/// Run the `switchboard` command line; the process's exit code.
pub fn main() -> ExitCode {
    switchboard_runtime::process::disable_transparent_huge_pages();
    switchboard_runtime::process::raise_open_file_limit();
    let cli = Cli::parse();
    // The terminal chat keeps the screen for the conversation: only errors
    // are logged there unless SWITCHBOARD_LOG asks for more.
    let level = match cli.command {
        Command::Chat { .. }
        | Command::Init(_)
        | Command::Migrate(_)
        | Command::Check { .. }
        | Command::Approvals { .. }
        | Command::Status { .. }
        | Command::Backup { .. }
        | Command::Doctor { .. }
        | Command::Reload { .. }
        | Command::Restore { .. }
        | Command::Bench { .. } => "error",
        Command::Run { .. } => "info",
    };
    let traces = match &cli.command {
        Command::Run { config } => crate::trace_export::trace_export(config),
        _ => None,
    };
    logging::init(cli.log_format, level, traces);
    run_to_exit(async {
        match cli.command {
            Command::Init(args) => init::run(*args).await,
            Command::Migrate(args) => migrate::run(args).await,
            Command::Check { config, probe } => check::run(&config, probe).await,
            Command::Chat { config, agent } => chat::run(&config, agent).await,
            Command::Run { config } => run::run(&config).await,
            Command::Approvals { config, limit } => approvals::run(&config, limit).await,
            Command::Status { config } => status::run(&config).await,
            Command::Doctor { config } => doctor::run(&config).await,
            Command::Reload { config } => reload::run(&config).await,
            Command::Backup { config, path } => backup::backup(&config, &path).await,
            Command::Restore { config, path } => backup::restore(&config, &path).await,
            Command::Bench { .. } => bench_command().await,
        }
    })
}

/// Run `work` on a multi-threaded async runtime; its exit code, or
/// failure with the error on stderr.
pub fn run_to_exit(work: impl std::future::Future<Output = anyhow::Result<ExitCode>>) -> ExitCode {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all();
    if let Some(hook) = crate::allocator::park_hook() {
        builder.on_thread_park(hook);
    }
    let rt = match builder.build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(work) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// `switchboard bench ...` reaches here only in a binary built without
/// benchmarks (the `bench` feature hands it to `switchboard-bench`).
async fn bench_command() -> anyhow::Result<ExitCode> {
    eprintln!(
        "this switchboard was built without benchmarks; build them with `cargo build --release --features bench`"
    );
    Ok(ExitCode::from(2))
}
