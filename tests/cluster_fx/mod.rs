//! What the cluster suites share: three `switchboard run` processes on one
//! PostgreSQL control plane (CI starts a server and sets
//! SWITCHBOARD_TEST_POSTGRES_URL), one loopback Telegram bot, scripted
//! models, and a local team chat and ops room each (each suite uses part
//! of it).
#![allow(dead_code)]

use crate::support::{Gateway, Sandbox, free_port, fresh_database, provider};
use serde_json::json;
use std::time::{Duration, Instant};
use switchboard_test_support::telegram::FakeTelegram;
use switchboard_test_support::{ScriptedModel, Step};

/// Seconds an instance may be silent before another takes its channels.
pub(crate) const LEASE: u64 = 3;

pub(crate) fn config(pg: &str, model: &str, reviewer: &str, tg: &str, _port: u16) -> String {
    let route = switchboard_test_support::config::ops_route("cli:alice");
    let telegram = switchboard_test_support::config::telegram_main(tg);
    format!(
        r#"database_url = "{pg}"
[cluster]
lease_secs = {LEASE}
{}{}[web]
[agents.main]
model_provider = "p"
channels = ["telegram.main", "local.team"]
[agents.reviewer]
model_provider = "prev"
[risk_profiles.default]
level = "supervised"
auto_approve = ["memory_recall", "delegate", "file_write"]
delegation_policy = {{ mode = "allow" }}
{route}timeout_secs = 60
{telegram}[channels.local.team]
allowed_users = ["*"]
[channels.local.ops]
allowed_users = ["cli:alice"]
[[cron]]
id = "tick"
schedule = "* * * * *"
agent = "main"
prompt = "cron tick"
"#,
        provider("p", model, ""),
        provider("prev", reviewer, "")
    )
}

pub(crate) struct Node {
    pub(crate) gw: Gateway,
    pub(crate) sandbox: Sandbox,
}

pub(crate) struct Cluster {
    pub(crate) _turn: tokio::sync::MutexGuard<'static, ()>,
    /// The minute (since the epoch) before any instance started: every
    /// cron slot after it is counted.
    pub(crate) first_minute: u64,
    pub(crate) model: ScriptedModel,
    pub(crate) reviewer: ScriptedModel,
    pub(crate) tg: FakeTelegram,
    pub(crate) nodes: Vec<Node>,
    /// The database the instances share.
    pub(crate) database: String,
}

/// The tests here run one at a time: each starts three gateways, and nine
/// at once on a two-core machine would time the machine, not the cluster.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

pub(crate) async fn cluster(name: &str) -> Option<Cluster> {
    cluster_with(name, [&[], &[], &[]]).await
}

/// The same, each instance started with its own extra environment.
pub(crate) async fn cluster_with(name: &str, envs: [&[(&str, &str)]; 3]) -> Option<Cluster> {
    cluster_tweaked(name, envs, |c| c).await
}

/// The same, with every instance's configuration changed by `tweak`.
pub(crate) async fn cluster_tweaked(
    name: &str,
    envs: [&[(&str, &str)]; 3],
    tweak: impl Fn(String) -> String,
) -> Option<Cluster> {
    let Some(pg) = fresh_database(name) else {
        eprintln!("SWITCHBOARD_TEST_POSTGRES_URL not set; the cluster test did not run here");
        return None;
    };
    Some(cluster_on(&pg, envs, tweak).await)
}

/// Three instances on the database at `pg`.
pub(crate) async fn cluster_on(pg: &str, envs: [&[(&str, &str)]; 3], tweak: impl Fn(String) -> String) -> Cluster {
    let this = crate::support::binary();
    cluster_of(pg, [&this, &this, &this], envs, tweak).await
}

/// Three instances on the database at `pg`, each run from its binary in
/// `programs` (builds of two versions: the upgrade tests).
pub(crate) async fn cluster_of(
    pg: &str,
    programs: [&std::path::Path; 3],
    envs: [&[(&str, &str)]; 3],
    tweak: impl Fn(String) -> String,
) -> Cluster {
    let turn = ONE_AT_A_TIME.lock().await;
    let (model, reviewer, tg) = (
        ScriptedModel::start().await,
        ScriptedModel::start().await,
        FakeTelegram::start().await,
    );
    // Cron ticks get an answer whenever they come.
    for _ in 0..5 {
        model.push(Step::text("tick done").when_last_contains("cron tick"));
    }
    let first_minute = minute_now();
    let mut nodes = Vec::new();
    for (env, program) in envs.into_iter().zip(programs) {
        let port = free_port();
        let sandbox = Sandbox::new(&tweak(config(pg, &model.url(), &reviewer.url(), &tg.url(), port)));
        let gw = Gateway::start_from(program, &sandbox, port, "team", env).await;
        nodes.push(Node { gw, sandbox });
    }
    Cluster {
        _turn: turn,
        first_minute,
        model,
        reviewer,
        tg,
        nodes,
        database: pg.to_string(),
    }
}

/// "start the review" makes `main` start a background review that runs for
/// a minute, and answer "Review started.".
pub(crate) fn script_slow_review(c: &Cluster) {
    c.model.push(
        Step::tool_call(
            "delegate",
            json!({"agent": "reviewer", "prompt": "slow review", "background": true}),
        )
        .when_last_contains("start the review"),
    );
    c.model
        .push(Step::text("Review started.").when_last_contains("Background task started"));
    c.reviewer.push(Step::text("late").delay(Duration::from_secs(60)));
}

pub(crate) const RUNS_IT: &str = "this instance runs the channel now";

/// The node that runs the Telegram bot now (waits for one).
pub(crate) async fn owner(c: &Cluster, except: Option<usize>, secs: u64) -> usize {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let owners: Vec<usize> = (0..c.nodes.len())
            .filter(|i| Some(*i) != except && c.nodes[*i].gw.log().contains(RUNS_IT))
            .collect();
        if let [one] = owners[..] {
            return one;
        }
        assert!(owners.len() <= 1, "two instances run the bot: {owners:?}");
        assert!(Instant::now() < deadline, "no instance took the bot within {secs} s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub(crate) fn texts(tg: &FakeTelegram) -> Vec<String> {
    tg.sent()
        .iter()
        .map(|m| m["text"].as_str().unwrap_or("").to_string())
        .collect()
}

pub(crate) fn cron_ticks(model: &ScriptedModel) -> usize {
    model
        .requests()
        .iter()
        .filter(|r| switchboard_test_support::last_message_text(r) == "cron tick")
        .count()
}

/// libfaketime (Debian's package), which sets a process's clock off.
pub(crate) const FAKETIME: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

pub(crate) fn minute_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        / 60
}

/// Ann asks something that needs an approval ("remember it": a
/// `memory_store`, answered "Stored." once allowed); the id of the request
/// prompted in node `owner`'s ops room.
pub(crate) async fn ask_for_an_approval(c: &Cluster, owner: usize) -> String {
    c.model
        .push(Step::tool_call("memory_store", json!({"key": "k", "content": "v"})).when_last_contains("remember it"));
    c.model.push(Step::text("Stored.").when_last_contains("stored memory"));
    c.tg.message(
        switchboard_test_support::telegram::private_chat(11, "Ann"),
        switchboard_test_support::telegram::user(11, "Ann"),
        "remember it",
        None,
        None,
    );
    let mut cursor = 0;
    let prompt = c.nodes[owner]
        .gw
        .wait_for("ops", &mut cursor, 20, |e| e["kind"] == "approval_prompt")
        .await;
    prompt["approval_id"].as_str().unwrap().to_string()
}

/// Wait until `node` answers `status` on `/readyz`; its body.
pub(crate) async fn readiness(node: &Node, status: u16, secs: u64) -> String {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let (got, body) = node.gw.get_raw("/readyz").await;
        if got == status {
            return body;
        }
        assert!(Instant::now() < deadline, "/readyz: {got} {body}, waited for {status}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

pub(crate) async fn event(
    node: &Node,
    alias: &str,
    secs: u64,
    pred: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let mut cursor = 0;
    node.gw.wait_for(alias, &mut cursor, secs, pred).await
}

/// `/approve` approval `id` from node `a`'s ops room: it is still
/// pending (allowed once), however long the database was away.
pub(crate) async fn decide_once(c: &Cluster, a: usize, id: &str) {
    c.nodes[a]
        .gw
        .send("ops", "ops-room", "cli:alice", &format!("/approve {id}"), true, false)
        .await;
    let decided = event(&c.nodes[a], "ops", 20, |e| {
        e["kind"] == "message"
            && e["text"]
                .as_str()
                .is_some_and(|t| t.starts_with(&format!("Approval {id}")))
    })
    .await;
    assert_eq!(
        decided["text"],
        format!("Approval {id}: allowed once."),
        "the approval outlived the outage"
    );
}

/// No instance took another (or was taken) for dead, and nothing was
/// reclaimed.
pub(crate) fn no_instance_taken_for_dead(c: &Cluster) {
    for (i, node) in c.nodes.iter().enumerate() {
        let log = node.gw.log();
        for never in [
            "took this instance for dead",
            "runs of a stopped gateway process are now lost",
            "approval requests of a stopped gateway process are now expired",
        ] {
            assert!(!log.contains(never), "instance {i} logged {never:?}:\n{log}");
        }
    }
}

/// What a person writing while the database is away is told, once.
pub(crate) const WAITS: &str =
    "I can't answer right now: my storage is unavailable. Your message is kept and I'll answer it as soon as I can.";
