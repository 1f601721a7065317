//! `switchboard check`: validate a configuration file.

use std::path::Path;
use std::process::ExitCode;
use switchboard_config::Config;

pub(crate) async fn run(path: &Path, probe: bool) -> anyhow::Result<ExitCode> {
    match Config::load(path) {
        Ok(config) => {
            for w in config.warnings() {
                println!("warning: {w}");
            }
            for line in crate::sandbox_report::lines(&config.sandbox) {
                println!("{line}");
            }
            let skills = report_skills(&config);
            println!(
                "{}: ok ({} agent(s), {} provider(s), {} channel(s){skills})",
                path.display(),
                config.agents.len(),
                config.providers.len(),
                config.channels.instances().len()
            );
            if probe && !probe_mcp(&config).await {
                return Ok(ExitCode::FAILURE);
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            print!("{e}");
            Ok(ExitCode::from(2))
        }
    }
}

/// Print each skill that cannot be used (a warning: the agent runs
/// without it) and return how many skills were found, for the summary.
fn report_skills(config: &Config) -> String {
    let mut found = 0;
    let mut seen = std::collections::HashSet::new();
    for (alias, agent) in config.agents.iter().filter(|(_, a)| a.enabled) {
        let workspace = Path::new(&config.workspace_dir).join(alias);
        let skills = switchboard_runtime::skills::scan(&switchboard_runtime::skills::roots(config, agent, &workspace));
        found += skills.found.len();
        for p in skills.problems {
            if seen.insert(p.path.clone()) {
                println!(
                    "warning: skill {}: {} (the agents run without it)",
                    p.path.display(),
                    p.problem
                );
            }
        }
    }
    match found {
        0 => String::new(),
        n => format!(", {n} skill(s)"),
    }
}

/// Start each enabled MCP server once, list its tools and stop it; false
/// when one could not be used.
async fn probe_mcp(config: &Config) -> bool {
    let sandbox = switchboard_runtime::confinement::sandbox_of(&config.sandbox);
    let servers = switchboard_mcp::McpServers::new(&config.mcp_servers, Path::new(&config.workspace_dir), &sandbox);
    let mut all_ok = true;
    for (name, server) in config.mcp_servers.iter().filter(|(_, s)| s.enabled) {
        match servers.probe(name).await {
            Ok(tools) => {
                println!("mcp server {name}: ok, {} tool(s)", tools.len());
                for t in tools {
                    let risk = t.risk.as_str();
                    println!("  {} — risk {risk}: {}", t.display, t.one_line());
                }
            }
            Err(why) => {
                all_ok = false;
                let how = match (&server.url, &server.command) {
                    (Some(url), _) => switchboard_mcp::redacted_url(url),
                    (None, Some(cmd)) => cmd.clone(),
                    (None, None) => "?".into(),
                };
                println!("mcp server {name} ({how}): FAILED: {why}");
            }
        }
    }
    all_ok
}
