//! Three `switchboard run` processes on one PostgreSQL control plane: one
//! instance polls the bot at a time, another takes it over when the owner
//! dies, decisions and stops typed to one instance reach the work on
//! another, and a cron slot fires once.

mod cluster_fx;
mod support;

use cluster_fx::*;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use switchboard_test_support::Step;
use switchboard_test_support::telegram::{private_chat, user};

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
    // Another person, so the two are not one merged turn.
    c.tg.message(private_chat(12, "Bob"), user(12, "Bob"), "message three", None, None);
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
    let id = ask_for_an_approval(&c, a).await;
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
