//! `mcp`: the cost of MCP tool servers. A stdio call's round trip through
//! the gateway's MCP client (kernel-confined server, supervision, result
//! capping) against the least a client can do with the same server (raw
//! JSON-RPC lines to a plain child process); and a gateway's idle memory
//! with three lazily started servers configured against none.

use crate::common::{percentile, print_quantiles, tempfile_dir};
use crate::regress::{Running, rss_mib};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio_util::sync::CancellationToken;

pub(crate) async fn mcp(
    server: Option<PathBuf>,
    calls: usize,
    runs: usize,
    idle_secs: u64,
) -> anyhow::Result<ExitCode> {
    let server = server
        .or_else(|| std::env::var_os("SWITCHBOARD_TEST_MCP_EVERYTHING").map(PathBuf::from))
        .ok_or_else(|| {
            anyhow::anyhow!(
                "give --server <.../server-everything/dist/index.js> (./scripts/test.sh installs it and sets SWITCHBOARD_TEST_MCP_EVERYTHING)"
            )
        })?;
    println!("mcp: {calls} sequential echo calls to @modelcontextprotocol/server-everything over stdio");
    let mut direct = direct_calls(&server, calls).await?;
    println!("  direct (raw JSON-RPC, unconfined child):");
    print_quantiles(&mut direct);
    let mut gateway = gateway_calls(&server, calls).await?;
    println!("  through the gateway's MCP client (confined child):");
    print_quantiles(&mut gateway);
    println!(
        "  added p50: {:+.3} ms",
        percentile(&gateway, 0.5) - percentile(&direct, 0.5)
    );
    idle_memory(&server, runs, idle_secs).await?;
    Ok(ExitCode::SUCCESS)
}

/// The everything server's `[mcp_servers.everything]` table.
fn table(server: &Path, start: &str) -> String {
    let folder = server.ancestors().nth(4).unwrap_or(server);
    format!(
        "[mcp_servers.{start}]\ncommand = \"node\"\nargs = [\"{}\", \"stdio\"]\nread_paths = [\"{}\"]\n",
        server.display(),
        folder.display()
    )
}

async fn gateway_calls(server: &Path, calls: usize) -> anyhow::Result<Vec<u64>> {
    let toml = format!(
        "[providers.p]\nkind = \"openai\"\nmodel = \"m\"\n[agents.main]\nmodel_provider = \"p\"\n{}",
        table(server, "everything")
    );
    let config = switchboard_config::Config::from_toml_str(&toml, "bench").map_err(|e| anyhow::anyhow!("{e}"))?;
    let dir = tempfile_dir()?;
    let sandbox = switchboard_runtime::confinement::sandbox_of(&config.sandbox);
    let servers = switchboard_mcp::McpServers::new(&config.mcp_servers, &dir, &sandbox);
    servers.ready(&["everything".to_string()]).await;
    let cancel = CancellationToken::new();
    let mut micros = Vec::with_capacity(calls);
    for i in 0..calls {
        let t = Instant::now();
        let out = servers
            .call("everything", "echo", json!({"message": format!("m{i}")}), &cancel)
            .await
            .map_err(|e| anyhow::anyhow!(e))?;
        micros.push(t.elapsed().as_micros() as u64);
        anyhow::ensure!(out.text == format!("Echo: m{i}"), "unexpected answer {}", out.text);
    }
    request_sizes(&servers.tools("everything"));
    servers.shutdown().await;
    std::fs::remove_dir_all(&dir).ok();
    Ok(micros)
}

/// The `tools` array of a model request offering 20 of the server's tools
/// (its 13, then the first 7 again under other names), whole and by name
/// with one-line descriptions, in the OpenAI-compatible shape.
fn request_sizes(tools: &[switchboard_mcp::ToolInfo]) {
    if tools.is_empty() {
        return;
    }
    let twenty: Vec<_> = tools.iter().cycle().take(20).enumerate().collect();
    let spec = |name: String, description: String, parameters: Value| json!({"type": "function", "function": {"name": name, "description": description, "parameters": parameters}});
    let whole: Vec<Value> = twenty
        .iter()
        .map(|(i, t)| spec(format!("{}{i}", t.wire), t.description.clone(), t.schema.clone()))
        .collect();
    let brief: Vec<Value> = twenty
        .iter()
        .map(|(i, t)| {
            spec(
                format!("{}{i}", t.wire),
                format!(
                    "{} [MCP server {}; call it to see its arguments]",
                    t.one_line(),
                    t.server
                ),
                json!({"type": "object", "properties": {}, "additionalProperties": true}),
            )
        })
        .collect();
    let (whole, brief) = (
        Value::from(whole).to_string().len(),
        Value::from(brief).to_string().len(),
    );
    println!(
        "  tools offered in one request, 20 tools: whole {whole} bytes, by name first {brief} bytes ({:.2}x)",
        brief as f64 / whole as f64
    );
}

/// The least a client does: newline-delimited JSON-RPC to the child.
async fn direct_calls(server: &Path, calls: usize) -> anyhow::Result<Vec<u64>> {
    let mut child = tokio::process::Command::new("node")
        .arg(server)
        .arg("stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    let mut stdin = child.stdin.take().ok_or_else(|| anyhow::anyhow!("no stdin"))?;
    let mut lines = BufReader::new(child.stdout.take().ok_or_else(|| anyhow::anyhow!("no stdout"))?).lines();
    let mut send = async |msg: Value| -> anyhow::Result<()> {
        stdin.write_all(format!("{msg}\n").as_bytes()).await?;
        Ok(())
    };
    send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}))
    .await?;
    answer(&mut lines, 0).await?;
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await?;
    let mut micros = Vec::with_capacity(calls);
    for i in 0..calls {
        let id = i as u64 + 1;
        let t = Instant::now();
        send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"message": format!("m{i}")}}}))
        .await?;
        answer(&mut lines, id).await?;
        micros.push(t.elapsed().as_micros() as u64);
    }
    Ok(micros)
}

/// Read lines until the answer to request `id` (notifications are skipped).
async fn answer(
    lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    id: u64,
) -> anyhow::Result<Value> {
    while let Some(line) = lines.next_line().await? {
        let msg: Value = serde_json::from_str(&line)?;
        if msg["id"] == id && msg.get("method").is_none() {
            return Ok(msg);
        }
    }
    anyhow::bail!("the server closed its output before answering {id}")
}

/// `switchboard run` idle, with no MCP server and with three lazy ones
/// its agent uses, alternately `runs` times: the median VmRSS of each.
async fn idle_memory(server: &Path, runs: usize, idle_secs: u64) -> anyhow::Result<()> {
    use switchboard_test_support::ScriptedModel;
    use switchboard_test_support::telegram::FakeTelegram;
    let binary = std::env::current_exe()?;
    println!("  {}", crate::common::CHANGED_DEFAULTS);
    let mut rss: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    for _ in 0..runs {
        for (k, with_servers) in [false, true].into_iter().enumerate() {
            let tg = FakeTelegram::start().await;
            let model = ScriptedModel::start().await;
            let dir = tempfile_dir()?;
            let telegram = format!(
                "[channels.telegram.main]\nbot_token = \"123:BENCH\"\napi_url = \"{}\"\nallowed_users = [\"*\"]\n",
                tg.url()
            );
            let path = crate::common::write_config(&dir, &model.url(), "telegram.main", &telegram)?;
            if with_servers {
                let mut text = std::fs::read_to_string(&path)?.replacen(
                    "[agents.main]\n",
                    "[agents.main]\nmcp_servers = [\"a\", \"b\", \"c\"]\n",
                    1,
                );
                for name in ["a", "b", "c"] {
                    text.push_str(&table(server, name));
                }
                std::fs::write(&path, text)?;
            }
            let child = std::process::Command::new(&binary)
                .args(["run", "--config"])
                .arg(&path)
                .env("SWITCHBOARD_LOG", "error")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()?;
            let process = Running(child);
            let started = Instant::now();
            while tg.get_updates_calls() == 0 {
                anyhow::ensure!(started.elapsed() < Duration::from_secs(30), "the gateway never polled");
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            tokio::time::sleep(Duration::from_secs(idle_secs)).await;
            rss[k].push(rss_mib(process.0.id(), "VmRSS:")?);
            drop(process);
            std::fs::remove_dir_all(&dir).ok();
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (none, three) = (median(&mut rss[0]), median(&mut rss[1]));
    println!("idle RSS {idle_secs} s after start (median of {runs}):");
    println!("  no MCP server:        {none:>6.1} MiB");
    println!("  three lazy servers:   {three:>6.1} MiB   ({:.2}x)", three / none);
    Ok(())
}
