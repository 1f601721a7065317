//! `switchboard doctor`: everything the gateway depends on, tried from
//! here — the configuration, the database and its migrations, each model
//! provider (reachable, model served, context window), each channel's
//! credentials (asked of the platform), the sandbox layers and the MCP
//! servers — as one table saying what to change. Exit code 1 when
//! something failed, 2 when the configuration itself is refused.

mod providers;

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;
use switchboard_config::Config;

/// How long one platform or server may take to answer.
pub(super) const WAIT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum State {
    Ok,
    Warn,
    Fail,
}

/// One line of the table.
pub(super) struct Row {
    area: &'static str,
    item: String,
    state: State,
    detail: String,
}

impl Row {
    pub(super) fn new(area: &'static str, item: impl Into<String>, state: State, detail: impl Into<String>) -> Self {
        Self {
            area,
            item: item.into(),
            state,
            detail: detail.into(),
        }
    }
}

pub(crate) async fn run(config_path: &Path) -> anyhow::Result<ExitCode> {
    let config = match Config::load(config_path) {
        Ok(c) => c,
        Err(e) => {
            print!("{e}");
            println!(
                "doctor: fix the configuration first (switchboard check --config {})",
                config_path.display()
            );
            return Ok(ExitCode::from(2));
        }
    };
    let mut rows = vec![Row::new(
        "config",
        config_path.display().to_string(),
        State::Ok,
        format!(
            "valid: {} agent(s), {} provider(s), {} channel(s)",
            config.agents.len(),
            config.providers.len(),
            config.channels.instances().len()
        ),
    )];
    rows.push(database(&config).await);
    for (name, p) in &config.providers {
        rows.push(providers::check(name, p).await);
    }
    for agent in config.agents.keys() {
        rows.push(providers::tool_cost(&config, agent).await);
    }
    rows.extend(channels(&config).await);
    rows.extend(sandbox(&config));
    rows.extend(mcp(&config).await);
    print_table(&rows);
    let failed = rows.iter().filter(|r| r.state == State::Fail).count();
    if failed > 0 {
        println!("doctor: {failed} problem(s) to fix");
        return Ok(ExitCode::FAILURE);
    }
    println!("doctor: everything answered");
    Ok(ExitCode::SUCCESS)
}

async fn database(config: &Config) -> Row {
    let url = switchboard_store::redact_url(&config.database_url);
    if let Ok(Some(file)) = switchboard_store::sqlite_file(&config.database_url)
        && !file.exists()
    {
        return Row::new(
            "database",
            url,
            State::Warn,
            format!("not created yet: `switchboard run` creates {}", file.display()),
        );
    }
    let opened = tokio::time::timeout(WAIT, switchboard_store::Store::open_existing(&config.database_url)).await;
    let store = match opened {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => {
            return Row::new(
                "database",
                url,
                State::Fail,
                format!("{e} → fix database_url or start the database"),
            );
        }
        Err(_) => {
            return Row::new(
                "database",
                url,
                State::Fail,
                "did not answer within 10 s → is the database server up?",
            );
        }
    };
    let row = match store.check_ready().await {
        Ok(()) => Row::new("database", url, State::Ok, "reachable, every migration applied"),
        Err(why) => Row::new("database", url, State::Fail, why.to_string()),
    };
    store.close().await;
    row
}

/// Each enabled channel's credentials, asked of its platform.
async fn channels(config: &Config) -> Vec<Row> {
    let adapters = match crate::adapters::build(config) {
        Ok(a) => a,
        Err(e) => return vec![Row::new("channel", "adapters", State::Fail, format!("{e:#}"))],
    };
    let mut rows = Vec::new();
    for ch in adapters.channels.all() {
        let table = format!("[channels.{}]", ch.name());
        let row = match tokio::time::timeout(WAIT, ch.whoami()).await {
            Ok(Ok(Some(who))) => Row::new(
                "channel",
                ch.name(),
                State::Ok,
                format!("credentials accepted: signed in as {who}"),
            ),
            Ok(Ok(None)) => Row::new("channel", ch.name(), State::Ok, "nothing to ask before it starts"),
            Ok(Err(switchboard_core::ChannelError::Permanent(why))) => Row::new(
                "channel",
                ch.name(),
                State::Fail,
                format!("the platform refused the credentials ({why}) → fix the token in {table}"),
            ),
            Ok(Err(e)) => Row::new(
                "channel",
                ch.name(),
                State::Fail,
                format!("the platform could not be asked ({e}) → check the network and the address in {table}"),
            ),
            Err(_) => Row::new(
                "channel",
                ch.name(),
                State::Fail,
                format!("no answer within 10 s → check the address in {table}"),
            ),
        };
        rows.push(row);
    }
    rows
}

/// Each layer of tool confinement on this kernel; a missing Landlock is
/// a failure when `[sandbox] required` (commands would be refused).
fn sandbox(config: &Config) -> Vec<Row> {
    let support = switchboard_sandbox::Support::get();
    let mut rows: Vec<Row> = support
        .layers()
        .into_iter()
        .map(|l| {
            let state = if l.active { State::Ok } else { State::Warn };
            let word = if l.active { "active" } else { "missing" };
            Row::new("sandbox", l.name, state, format!("{word}: {}", l.detail))
        })
        .collect();
    if let Some(w) = crate::sandbox_report::warning(&config.sandbox, support) {
        let state = if config.sandbox.required {
            State::Fail
        } else {
            State::Warn
        };
        rows.push(Row::new("sandbox", "commands", state, w));
    }
    rows
}

/// Each enabled MCP server started once and asked for its tools.
async fn mcp(config: &Config) -> Vec<Row> {
    let sandbox = switchboard_runtime::confinement::sandbox_of(&config.sandbox);
    let servers = switchboard_mcp::McpServers::new(&config.mcp_servers, Path::new(&config.workspace_dir), &sandbox);
    let mut rows = Vec::new();
    for (name, _) in config.mcp_servers.iter().filter(|(_, s)| s.enabled) {
        rows.push(match servers.probe(name).await {
            Ok(tools) => Row::new("mcp", name.clone(), State::Ok, format!("{} tool(s)", tools.len())),
            Err(why) => Row::new(
                "mcp",
                name.clone(),
                State::Fail,
                format!("{why} → see [mcp_servers.{name}]"),
            ),
        });
    }
    rows
}

fn print_table(rows: &[Row]) {
    let width = rows.iter().map(|r| r.item.len()).max().unwrap_or(4).clamp(4, 40);
    println!("{:<9} {:<width$} {:<5} DETAIL", "AREA", "ITEM", "STATE");
    for r in rows {
        let state = match r.state {
            State::Ok => "ok",
            State::Warn => "WARN",
            State::Fail => "FAIL",
        };
        println!("{:<9} {:<width$} {:<5} {}", r.area, r.item, state, r.detail);
    }
}
