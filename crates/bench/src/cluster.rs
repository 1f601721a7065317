//! `switchboard bench cluster`: three `switchboard run` processes (this
//! binary) on one PostgreSQL database, a loopback Telegram bot and an
//! instant scripted model: failover time (owner killed → first reply from
//! the new owner), messages/s through the bot with one and with three
//! instances, and cross-instance approval latency (decision typed to
//! another instance → the tool's reply).

use crate::common::percentile;
use serde_json::{Value, json};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};
use switchboard_store::Store;
use switchboard_test_support::telegram::{FakeTelegram, private_chat, user};
use switchboard_test_support::{ScriptedModel, Step};

/// Lease time of the benchmark cluster.
const LEASE_SECS: u64 = 3;

struct Node {
    child: Child,
    /// A client of the node's local API (its UNIX socket).
    http: reqwest::Client,
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Bench {
    dir: std::path::PathBuf,
    config: std::path::PathBuf,
    tg: FakeTelegram,
    model: ScriptedModel,
    store: Store,
}

fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

impl Bench {
    /// Start one node (its own folder, and so its own local API socket).
    async fn node(&self, n: usize) -> anyhow::Result<Node> {
        let port = free_port()?;
        let dir = self.dir.join(format!("node-{n}-{port}"));
        std::fs::create_dir_all(&dir)?;
        let text = std::fs::read_to_string(&self.config)?;
        let config = dir.join("switchboard.toml");
        std::fs::write(&config, text)?;
        let log = std::fs::File::create(dir.join("gateway.log"))?;
        let child = Command::new(std::env::current_exe()?)
            .args(["run", "--config"])
            .arg(&config)
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()?;
        let http = reqwest::Client::builder()
            .unix_socket(dir.join("data/switchboard.sock"))
            .build()?;
        let node = Node { child, http };
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.events(&node, "ops").await.is_err() {
            anyhow::ensure!(Instant::now() < deadline, "a node did not come up");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(node)
    }

    async fn events(&self, node: &Node, alias: &str) -> anyhow::Result<Vec<Value>> {
        let url = format!("http://localhost/local/{alias}/events?after=0&wait_ms=0");
        let v: Value = node.http.get(url).send().await?.error_for_status()?.json().await?;
        Ok(v["events"].as_array().cloned().unwrap_or_default())
    }

    /// The pid of the node that holds the bot's lease (waits for one of
    /// `nodes` to hold it).
    async fn owner_pid(&self, nodes: &[Node]) -> anyhow::Result<u32> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let now = switchboard_store::now_ms();
            if let Some(l) = self.store.leases().get("telegram.main").await?
                && now - l.renewed_at < (LEASE_SECS * 1000) as i64
                && let Some(i) = self.store.instances().await?.into_iter().find(|i| i.id == l.owner)
                && let Ok(pid) = u32::try_from(i.pid)
                && nodes.iter().any(|n| n.child.id() == pid)
            {
                return Ok(pid);
            }
            anyhow::ensure!(Instant::now() < deadline, "no instance took the bot");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Wait for `n` more messages from the bot than `before`; their texts.
    async fn wait_more(&self, before: usize, n: usize) -> Vec<String> {
        loop {
            let sent = self.tg.sent();
            if sent.len() >= before + n {
                return sent[before..]
                    .iter()
                    .map(|m| m["text"].as_str().unwrap_or("").to_string())
                    .collect();
            }
            tokio::time::sleep(Duration::from_micros(500)).await;
        }
    }
}

/// A fresh database on the server at `admin_url`.
async fn fresh_database(admin_url: &str) -> anyhow::Result<String> {
    let name = format!("sb_bench_{}", uuid::Uuid::new_v4().simple());
    let pool = sqlx::PgPool::connect(admin_url).await?;
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&pool)
        .await?;
    let (base, _) = admin_url
        .rsplit_once('/')
        .ok_or_else(|| anyhow::anyhow!("the PostgreSQL URL names no database"))?;
    Ok(format!("{base}/{name}"))
}

pub(crate) async fn cluster(
    database: &str,
    kills: usize,
    messages: usize,
    approvals: usize,
) -> anyhow::Result<ExitCode> {
    let bench = Bench::start(database).await?;
    let mut nodes = Vec::new();
    for n in 0..3 {
        nodes.push(bench.node(n).await?);
    }
    println!(
        "cluster: 3 switchboard run processes on PostgreSQL, lease_secs = {LEASE_SECS}, loopback Telegram, instant model"
    );
    println!("  {}", crate::common::CHANGED_DEFAULTS);

    failover(&bench, &mut nodes, kills).await?;
    throughput(&bench, &mut nodes, messages).await?;
    approvals_across(&bench, &mut nodes, approvals).await?;
    let replies = bench.tg.sent();
    let asked = bench.tg.last_update_id();
    println!(
        "  the bot sent {} messages for {asked} updates (each answered once; approval prompts go to a local chat)",
        replies.len()
    );
    drop(nodes);
    bench.store.close().await;
    std::fs::remove_dir_all(&bench.dir).ok();
    Ok(ExitCode::SUCCESS)
}

impl Bench {
    /// A fresh database, the loopback Telegram and model, and the
    /// configuration every node starts from.
    async fn start(database: &str) -> anyhow::Result<Self> {
        let url = fresh_database(database).await?;
        let tg = FakeTelegram::start().await;
        let model = ScriptedModel::start().await;
        model.without_recording();
        let dir = std::env::temp_dir().join(format!("switchboard-bench-cluster-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir)?;
        let route = switchboard_test_support::config::ops_route("cli:alice");
        let config = dir.join("template.toml");
        std::fs::write(
            &config,
            format!(
                r#"database_url = "{url}"
[cluster]
lease_secs = {LEASE_SECS}
[providers.p]
kind = "openai"
base_url = "{model}"
model = "instant"
max_retries = 0
[web]
[agents.main]
model_provider = "p"
channels = ["telegram.main"]
[risk_profiles.default]
level = "supervised"
auto_approve = ["memory_recall"]
{route}[limits]
messages_per_minute = 0
session_queue = 1000
[channels.telegram.main]
bot_token = "123:BENCH"
api_url = "{tg}"
allowed_users = ["*"]
[channels.local.ops]
allowed_users = ["cli:alice"]
"#,
                model = model.url(),
                tg = tg.url()
            ),
        )?;
        Ok(Bench {
            dir: dir.clone(),
            config,
            store: Store::open(&url).await?,
            tg,
            model,
        })
    }
}

/// Failover: kill the owner, time the first reply after it.
async fn failover(bench: &Bench, nodes: &mut Vec<Node>, kills: usize) -> anyhow::Result<()> {
    let mut failovers = Vec::with_capacity(kills);
    for k in 0..kills {
        let pid = bench.owner_pid(nodes).await?;
        bench.model.push(Step::text("ok").when_last_contains("kill"));
        let before = bench.tg.sent().len();
        bench.tg.message(
            private_chat(11, "Ann"),
            user(11, "Ann"),
            &format!("before kill {k}"),
            None,
            None,
        );
        bench.wait_more(before, 1).await;
        let at = nodes
            .iter()
            .position(|n| n.child.id() == pid)
            .ok_or_else(|| anyhow::anyhow!("the owner is not one of the nodes"))?;
        // As between phases: the reply's delivered mark lands first.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let t = Instant::now();
        drop(nodes.remove(at));
        bench.model.push(Step::text("ok").when_last_contains("kill"));
        let before = bench.tg.sent().len();
        bench.tg.message(
            private_chat(11, "Ann"),
            user(11, "Ann"),
            &format!("after kill {k}"),
            None,
            None,
        );
        bench.wait_more(before, 1).await;
        failovers.push(t.elapsed().as_micros() as u64);
        nodes.push(bench.node(10 + k).await?);
    }
    failovers.sort_unstable();
    if !failovers.is_empty() {
        println!(
            "  failover (owner killed -> first reply from the new owner), {kills} kills: p50 {:.0} ms   max {:.0} ms",
            percentile(&failovers, 0.5),
            percentile(&failovers, 1.0)
        );
    }

    Ok(())
}

/// Throughput through the one bot, with three instances and with one.
async fn throughput(bench: &Bench, nodes: &mut Vec<Node>, messages: usize) -> anyhow::Result<()> {
    for alive in [3usize, 1] {
        // Let the last replies' delivered marks land before stopping
        // nodes: a node killed between Telegram taking a reply and the
        // mark has that reply sent again by the next owner (Telegram has
        // no idempotency key; see docs/operations.md).
        tokio::time::sleep(Duration::from_secs(1)).await;
        while nodes.len() > alive {
            drop(nodes.pop());
        }
        bench.owner_pid(nodes).await?;
        for _ in 0..messages {
            bench.model.push(Step::text("ok").when_last_contains("all at once"));
        }
        let before = bench.tg.sent().len();
        let t = Instant::now();
        for u in 0..messages {
            let id = 20_000 + (alive * 10_000 + u) as i64;
            bench
                .tg
                .message(private_chat(id, "P"), user(id, "P"), "all at once", None, None);
        }
        bench.wait_more(before, messages).await;
        let took = t.elapsed();
        println!(
            "  {messages} people at once with {alive} instance(s): {:.0} ms = {:.0} messages/s",
            took.as_secs_f64() * 1e3,
            messages as f64 / took.as_secs_f64()
        );
    }

    Ok(())
}

/// Cross-instance approvals: asked on the owner, decided on another.
async fn approvals_across(bench: &Bench, nodes: &mut Vec<Node>, approvals: usize) -> anyhow::Result<()> {
    while nodes.len() < 2 {
        nodes.push(bench.node(100 + nodes.len()).await?);
    }
    let pid = bench.owner_pid(nodes).await?;
    let (owner, other) = if nodes[0].child.id() == pid { (0, 1) } else { (1, 0) };
    let mut decisions = Vec::with_capacity(approvals);
    for i in 0..approvals {
        bench.model.push(
            Step::tool_call("memory_store", json!({"key": format!("k{i}"), "content": "v"}))
                .when_last_contains(&format!("remember {i}")),
        );
        bench
            .model
            .push(Step::text("stored").when_last_contains("stored memory"));
        bench.tg.message(
            private_chat(12, "Bob"),
            user(12, "Bob"),
            &format!("remember {i}"),
            None,
            None,
        );
        let id = loop {
            let prompts: Vec<String> = bench
                .events(&nodes[owner], "ops")
                .await?
                .iter()
                .filter(|e| e["kind"] == "approval_prompt")
                .filter_map(|e| e["approval_id"].as_str().map(str::to_string))
                .collect();
            if prompts.len() > i {
                break prompts[i].clone();
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        };
        let before = bench.tg.sent().len();
        let t = Instant::now();
        let body =
            json!({"chat": "ops-room", "user": "cli:alice", "text": format!("/approve {id}"), "mentioned": true});
        nodes[other]
            .http
            .post("http://localhost/local/ops/send")
            .json(&body)
            .send()
            .await?
            .error_for_status()?;
        // The tool's reply to Bob (a straggler from an earlier phase may
        // come first).
        loop {
            let sent = bench.tg.sent();
            if sent[before.min(sent.len())..]
                .iter()
                .any(|m| m["text"] == "stored" && m["chat"]["id"] == 12)
            {
                break;
            }
            tokio::time::sleep(Duration::from_micros(500)).await;
        }
        decisions.push(t.elapsed().as_micros() as u64);
    }
    decisions.sort_unstable();
    if !decisions.is_empty() {
        println!(
            "  cross-instance approval (typed to another instance -> the tool ran and the reply was sent), n={approvals}: p50 {:.0} ms   p99 {:.0} ms",
            percentile(&decisions, 0.5),
            percentile(&decisions, 0.99)
        );
    }
    Ok(())
}
