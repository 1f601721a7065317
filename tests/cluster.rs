//! Three `switchboard run` processes on one PostgreSQL control plane
//! (CI starts a server and sets SWITCHBOARD_TEST_POSTGRES_URL), one
//! loopback Telegram bot, a local team chat and ops room each: one instance
//! polls the bot at a time, another takes it over when the owner dies,
//! decisions and stops typed to one instance reach the work on another,
//! and a cron slot fires once.

mod support;

use serde_json::{Value, json};
use std::time::{Duration, Instant};
use support::{Gateway, Sandbox, free_port, fresh_database, provider};
use switchboard_test_support::telegram::{FakeTelegram, private_chat, user};
use switchboard_test_support::{ScriptedModel, Step};

/// Seconds an instance may be silent before another takes its channels.
const LEASE: u64 = 3;

fn config(pg: &str, model: &str, reviewer: &str, tg: &str, port: u16) -> String {
    let route = switchboard_test_support::config::ops_route("cli:alice");
    let telegram = switchboard_test_support::config::telegram_main(tg);
    format!(
        r#"database_url = "{pg}"
[cluster]
lease_secs = {LEASE}
{}{}[web]
listen = "127.0.0.1:{port}"
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

struct Node {
    gw: Gateway,
    sandbox: Sandbox,
}

struct Cluster {
    _turn: tokio::sync::MutexGuard<'static, ()>,
    /// The minute (since the epoch) before any instance started: every
    /// cron slot after it is counted.
    first_minute: u64,
    model: ScriptedModel,
    reviewer: ScriptedModel,
    tg: FakeTelegram,
    nodes: Vec<Node>,
}

/// The tests here run one at a time: each starts three gateways, and nine
/// at once on a two-core machine would time the machine, not the cluster.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn cluster(name: &str) -> Option<Cluster> {
    cluster_with(name, [&[], &[], &[]]).await
}

/// The same, each instance started with its own extra environment.
async fn cluster_with(name: &str, envs: [&[(&str, &str)]; 3]) -> Option<Cluster> {
    let Some(pg) = fresh_database(name) else {
        eprintln!("SWITCHBOARD_TEST_POSTGRES_URL not set; the cluster test did not run here");
        return None;
    };
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
    for env in envs {
        let port = free_port();
        let sandbox = Sandbox::new(&config(&pg, &model.url(), &reviewer.url(), &tg.url(), port));
        let gw = Gateway::start_with_env(&sandbox, port, "team", env).await;
        nodes.push(Node { gw, sandbox });
    }
    Some(Cluster {
        _turn: turn,
        first_minute,
        model,
        reviewer,
        tg,
        nodes,
    })
}

/// "start the review" makes `main` start a background review that runs for
/// a minute, and answer "Review started.".
fn script_slow_review(c: &Cluster) {
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

const RUNS_IT: &str = "this instance runs the channel now";

/// The node that runs the Telegram bot now (waits for one).
async fn owner(c: &Cluster, except: Option<usize>, secs: u64) -> usize {
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

fn texts(tg: &FakeTelegram) -> Vec<String> {
    tg.sent()
        .iter()
        .map(|m| m["text"].as_str().unwrap_or("").to_string())
        .collect()
}

fn cron_ticks(model: &ScriptedModel) -> usize {
    model
        .requests()
        .iter()
        .filter(|r| switchboard_test_support::last_message_text(r) == "cron tick")
        .count()
}

/// libfaketime (Debian's package), which sets a process's clock off.
const FAKETIME: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

fn minute_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        / 60
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_instance_runs_the_bot_and_another_takes_over_when_it_dies() {
    let Some(mut c) = cluster("failover").await else { return };
    let first_minute = c.first_minute;
    let ann = || (private_chat(11, "Ann"), user(11, "Ann"));
    let a = owner(&c, None, 20).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(c.tg.max_concurrent_polls(), 1, "only the owner polls the bot");

    c.model.push(Step::text("answer one").when_last_contains("message one"));
    // A background task on the owner, still running when it dies.
    script_slow_review(&c);
    let (chat, from) = ann();
    c.tg.message(chat, from, "message one", None, None);
    c.tg.wait_sent(1, 20).await;
    let (chat, from) = ann();
    c.tg.message(chat, from, "start the review", None, None);
    c.tg.wait_sent(2, 20).await;

    // The owner dies; people keep writing.
    c.nodes[a].gw.kill();
    let killed = Instant::now();
    c.model.push(Step::text("answer two").when_last_contains("message two"));
    c.model
        .push(Step::text("answer three").when_last_contains("message three"));
    let (chat, from) = ann();
    c.tg.message(chat, from, "message two", None, None);
    let (chat, from) = ann();
    c.tg.message(chat, from, "message three", None, None);
    let b = owner(&c, Some(a), 20).await;
    let took = killed.elapsed();
    println!(
        "failover: the bot was taken over {:.2} s after the owner died",
        took.as_secs_f64()
    );
    assert!(took <= Duration::from_secs(LEASE + 2), "took {took:?}");
    c.tg.wait_sent(5, 30).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let sent = texts(&c.tg);
    for want in ["answer one", "answer two", "answer three"] {
        assert_eq!(sent.iter().filter(|t| *t == want).count(), 1, "{want}: {sent:#?}");
    }
    let lost: Vec<&String> = sent.iter().filter(|t| t.contains("run lost")).collect();
    assert_eq!(lost.len(), 1, "the lost background task is announced once: {sent:#?}");
    assert!(c.nodes[b].gw.log().contains(RUNS_IT));

    // `switchboard status` tells who runs the bot now.
    let (code, out, err) =
        c.nodes[b]
            .sandbox
            .run(&["status", "--config", c.nodes[b].sandbox.config_path().to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("telegram.main owned by") && out.contains("held"), "{out}");
    assert_eq!(out.matches(", live").count(), 2, "two instances are left: {out}");
    assert!(out.contains("outbox: "), "{out}");

    // Cron: every minute boundary crossed while the cluster ran fired once.
    if minute_now() == first_minute {
        let wait = 61
            - std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_secs()
                % 60;
        tokio::time::sleep(Duration::from_secs(wait + 3)).await;
    } else {
        tokio::time::sleep(Duration::from_secs(3)).await;
    }
    let boundaries = (minute_now() - first_minute) as usize;
    assert_eq!(
        cron_ticks(&c.model),
        boundaries,
        "one cron run per slot across the cluster"
    );
}

/// Wait for an event on `alias` of `node` matching `pred`.
async fn event(node: &Node, alias: &str, secs: u64, pred: impl Fn(&Value) -> bool) -> Value {
    let mut cursor = 0;
    node.gw.wait_for(alias, &mut cursor, secs, pred).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decisions_and_stops_typed_to_one_instance_reach_the_work_on_another() {
    let Some(c) = cluster("control").await else { return };
    let a = owner(&c, None, 20).await;
    let b = (a + 1) % 3;

    // An approval asked on the owner, decided through another instance.
    c.model
        .push(Step::tool_call("memory_store", json!({"key": "k", "content": "v"})).when_last_contains("remember it"));
    c.model.push(Step::text("Stored.").when_last_contains("stored memory"));
    c.tg.message(private_chat(11, "Ann"), user(11, "Ann"), "remember it", None, None);
    let prompt = event(&c.nodes[a], "ops", 20, |e| e["kind"] == "approval_prompt").await;
    let id = prompt["approval_id"].as_str().unwrap().to_string();
    let typed = Instant::now();
    c.nodes[b]
        .gw
        .send("ops", "ops-room", "cli:alice", &format!("/approve {id}"), true, false)
        .await;
    let answer = event(&c.nodes[b], "ops", 20, |e| e["kind"] == "message").await;
    assert_eq!(answer["text"], format!("Approval {id}: allowed once."));
    let sent = c.tg.wait_sent(1, 20).await;
    println!(
        "cross-instance decision to reply: {:.0} ms",
        typed.elapsed().as_secs_f64() * 1e3
    );
    assert_eq!(sent[0]["text"], "Stored.");
    let edited = event(&c.nodes[a], "ops", 20, |e| e["kind"] == "edit").await;
    assert!(
        edited["text"].as_str().unwrap().contains("Allowed once by cli:alice"),
        "{edited}"
    );

    // A background task started from A's team chat, killed from B's.
    script_slow_review(&c);
    c.nodes[a]
        .gw
        .send("team", "room", "cli:bob", "start the review", true, false)
        .await;
    event(&c.nodes[a], "team", 20, |e| e["text"] == "Review started.").await;
    let kill = Instant::now();
    c.nodes[b]
        .gw
        .send("team", "room", "cli:bob", "/subagents kill all", true, false)
        .await;
    let killed = event(&c.nodes[b], "team", 20, |e| {
        e["text"].as_str().is_some_and(|t| t.starts_with("Killed 1 run"))
    })
    .await;
    assert!(killed["text"].as_str().unwrap().starts_with("Killed 1 run"));
    // The task on A stops at once and its end is announced (by whichever
    // instance delivers the team chat's outbox).
    let deadline = Instant::now() + Duration::from_secs(10);
    let stopped = loop {
        let mut found = None;
        for n in &c.nodes {
            let events = n.gw.events("team", 0).await;
            if events
                .iter()
                .any(|e| e["text"].as_str().is_some_and(|t| t.contains("run cancelled")))
            {
                found = Some(kill.elapsed());
            }
        }
        if let Some(t) = found {
            break t;
        }
        assert!(Instant::now() < deadline, "the task on {a} was not stopped");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    println!(
        "a kill typed to one instance stopped the task on another after {:.0} ms",
        stopped.as_secs_f64() * 1e3
    );
    assert!(stopped < Duration::from_secs(2), "{stopped:?}");

    // `/subagents pause` typed to B holds on A too; `resume` lifts it.
    c.nodes[b]
        .gw
        .send("team", "room", "cli:alice", "/subagents pause", true, false)
        .await;
    event(&c.nodes[b], "team", 20, |e| {
        e["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("Delegation spawning is paused"))
    })
    .await;
    c.model.push(
        Step::tool_call(
            "delegate",
            json!({"agent": "reviewer", "prompt": "another", "background": true}),
        )
        .when_last_contains("another review"),
    );
    c.model
        .push(Step::text("Refused while paused.").when_last_contains("spawning is paused"));
    tokio::time::sleep(Duration::from_millis(500)).await;
    c.nodes[a]
        .gw
        .send("team", "room", "cli:bob", "another review please", true, false)
        .await;
    event(&c.nodes[a], "team", 20, |e| e["text"] == "Refused while paused.").await;
    c.nodes[b]
        .gw
        .send("team", "room", "cli:alice", "/subagents resume", true, false)
        .await;
    event(&c.nodes[b], "team", 20, |e| {
        e["text"] == "Delegation spawning resumed for main."
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;

    // `/subagents send` typed to B reaches a child running on A.
    c.model.push(
        Step::tool_call(
            "delegate",
            json!({"agent": "reviewer", "prompt": "chatty review", "background": true}),
        )
        .when_last_contains("a chatty review"),
    );
    c.model
        .push(Step::text("Chatty review started.").when_last_contains("Background task started"));
    c.reviewer
        .push(Step::tool_call("memory_recall", json!({"query": "x"})).delay(Duration::from_secs(2)));
    c.reviewer
        .push(Step::text("child heard it").when_last_contains("hello child"));
    c.nodes[a]
        .gw
        .send("team", "room", "cli:bob", "start a chatty review", true, false)
        .await;
    event(&c.nodes[a], "team", 20, |e| e["text"] == "Chatty review started.").await;
    // The id of the task just started (the last one the model was told of).
    let chatty: String = c
        .model
        .requests()
        .iter()
        .flat_map(switchboard_test_support::tool_results)
        .filter_map(|r| {
            r.split("task_id: ")
                .nth(1)
                .map(|t| t.lines().next().unwrap_or("").trim().to_string())
        })
        .next_back()
        .expect("the task id of the chatty review");
    c.nodes[b]
        .gw
        .send(
            "team",
            "room",
            "cli:bob",
            &format!("/subagents send {} hello child", &chatty[..8]),
            true,
            false,
        )
        .await;
    let sent = event(&c.nodes[b], "team", 20, |e| {
        e["text"].as_str().is_some_and(|t| t.starts_with("Sent to "))
    })
    .await;
    assert!(sent["text"].as_str().unwrap().contains("another gateway"), "{sent}");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !c
        .reviewer
        .requests()
        .iter()
        .any(|r| r.to_string().contains("hello child"))
    {
        assert!(
            Instant::now() < deadline,
            "the child on A never saw the message sent through B"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A paused old owner (SIGSTOP) loses its lease; resumed, it does not
/// write its stale cursor and gives the bot up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_owner_resumed_after_losing_its_lease_gives_the_bot_up() {
    let Some(c) = cluster("fencing").await else { return };
    let a = owner(&c, None, 20).await;
    c.nodes[a].gw.signal("STOP");
    let b = owner(&c, Some(a), 20).await;
    c.model
        .push(Step::text("answered by the new owner").when_last_contains("while paused"));
    c.tg.message(private_chat(11, "Ann"), user(11, "Ann"), "while paused", None, None);
    c.tg.wait_sent(1, 20).await;
    c.nodes[a].gw.signal("CONT");
    let deadline = Instant::now() + Duration::from_secs(15);
    while !c.nodes[a].gw.log().contains("another instance took the channel") {
        assert!(
            Instant::now() < deadline,
            "the old owner did not give the bot up:\n{}",
            c.nodes[a].gw.log()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    c.model
        .push(Step::text("still answered once").when_last_contains("after the pause"));
    c.tg.message(private_chat(11, "Ann"), user(11, "Ann"), "after the pause", None, None);
    c.tg.wait_sent(2, 20).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let sent = texts(&c.tg);
    assert_eq!(
        sent,
        ["answered by the new owner", "still answered once"],
        "nothing twice"
    );
    assert!(c.nodes[b].gw.log().contains(RUNS_IT));
}

/// An instance stalled (SIGSTOP) in the middle of a turn, past its lease:
/// another adopts the message and answers it. Woken up (SIGCONT), the
/// stalled one gets its model's answer — a tool call — and does not run
/// it (the message is no longer its), sends nothing, and registers under
/// a new id. The tool ran once, the person got one answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_instance_runs_no_tool_of_a_turn_another_adopted() {
    let Some(c) = cluster("stalled").await else { return };
    let a = owner(&c, None, 20).await;
    let append = json!({"path": "count.txt", "content": "ran\n", "append": true});
    // A's model call comes back after A has been stalled past its lease.
    c.model.push(
        Step::tool_call("file_write", append.clone())
            .when_last_contains("stall test")
            .delay(Duration::from_secs(3)),
    );
    // The instance that adopts the message runs the turn again.
    c.model
        .push(Step::tool_call("file_write", append).when_last_contains("stall test"));
    c.model.push(Step::text("answered once").when_last_contains("wrote"));
    c.tg.message(private_chat(12, "Bo"), user(12, "Bo"), "stall test", None, None);
    let deadline = Instant::now() + Duration::from_secs(10);
    while c.model.requests().is_empty() {
        assert!(Instant::now() < deadline, "the turn never reached the model");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    c.nodes[a].gw.signal("STOP");
    let b = owner(&c, Some(a), 20).await;
    c.tg.wait_sent(1, 30).await;
    c.nodes[a].gw.signal("CONT");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !c.nodes[a].gw.log().contains("registered again") {
        assert!(
            Instant::now() < deadline,
            "the stalled instance never noticed:\n{}",
            c.nodes[a].gw.log()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Give A time to act on its model's answer, if it were going to.
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(texts(&c.tg), ["answered once"], "one answer");
    let ran_on = |i: usize| {
        std::fs::read_to_string(c.nodes[i].sandbox.path().join("workspace/main/count.txt")).unwrap_or_default()
    };
    let others: String = (0..c.nodes.len()).filter(|i| *i != a).map(ran_on).collect();
    assert_eq!(others, "ran\n", "the adopting instance ran the tool once");
    assert!(c.nodes[b].gw.log().contains(RUNS_IT));
    assert_eq!(
        ran_on(a),
        "",
        "the stalled instance ran nothing:\n{}",
        c.nodes[a].gw.log()
    );
    let log = c.nodes[a].gw.log();
    assert!(log.contains("stopped every turn and run of this instance"), "{log}");
}

/// Hosts whose clocks are an hour apart: every time another instance
/// compares (heartbeats, leases, cron slots) is on the database's clock, so
/// nobody takes the others for dead, one instance runs the bot, a message
/// gets one answer and each cron slot fires once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instances_whose_clocks_are_an_hour_apart_keep_to_the_databases_clock() {
    if !std::path::Path::new(FAKETIME).exists() {
        assert!(
            std::env::var_os("SWITCHBOARD_TEST_REQUIRE_FAKETIME").is_none(),
            "{FAKETIME} is missing (apt-get install libfaketime)"
        );
        eprintln!("libfaketime is not installed; the clock-skew test did not run here");
        return;
    }
    let skewed = |by: &'static str| {
        [
            ("LD_PRELOAD", FAKETIME),
            ("FAKETIME", by),
            ("FAKETIME_DONT_FAKE_MONOTONIC", "1"),
        ]
    };
    let (behind, ahead) = (skewed("-1h"), skewed("+1h"));
    let Some(c) = cluster_with("skew", [&[], &behind, &ahead]).await else {
        return;
    };
    let first_minute = c.first_minute;
    owner(&c, None, 20).await;
    // Several leases pass: each instance sweeps for dead ones every beat.
    tokio::time::sleep(Duration::from_secs(4 * LEASE)).await;
    c.model.push(Step::text("one answer").when_last_contains("clock test"));
    c.tg.message(private_chat(13, "Cy"), user(13, "Cy"), "clock test", None, None);
    c.tg.wait_sent(1, 20).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(texts(&c.tg), ["one answer"]);
    for (i, node) in c.nodes.iter().enumerate() {
        let log = node.gw.log();
        assert!(!log.contains("took this instance for dead"), "instance {i}:\n{log}");
        assert!(!log.contains("stopped gateway process"), "instance {i}:\n{log}");
    }
    assert!(
        c.nodes[2].gw.log().contains("clock differs from the database"),
        "the instance an hour ahead is told"
    );
    let (code, out, err) =
        c.nodes[0]
            .sandbox
            .run(&["status", "--config", c.nodes[0].sandbox.config_path().to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.matches(", live").count(), 3, "{out}");
    let boundaries = (minute_now() - first_minute) as usize;
    let ticks = cron_ticks(&c.model);
    assert!(
        ticks == boundaries || ticks + 1 == boundaries,
        "one cron run per slot crossed ({boundaries}), on the database's clock: {ticks}"
    );
}
