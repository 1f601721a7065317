//! Durable announcements of background work, through `switchboard run`
//! with a local team chat: they land in the thread where the work was
//! asked for, and a task lost to a crash is announced once after restart.

mod support;

use serde_json::json;
use std::time::Duration;
use support::{Gateway, Sandbox, free_port, team_with_reviewer};
use switchboard_test_support::{ScriptedModel, Step};

/// Two scripted models, a gateway on them, and `main` asked to start
/// `prompt` as a background delegation (answering `ack`).
async fn with_background_task(prompt: &str, ack: &str) -> (ScriptedModel, ScriptedModel, Sandbox, Gateway, u16) {
    let (main, reviewer) = (ScriptedModel::start().await, ScriptedModel::start().await);
    let port = free_port();
    let sandbox = Sandbox::new(&team_with_reviewer(&main.url(), &reviewer.url(), port, ""));
    let gw = Gateway::start(&sandbox, port, "team").await;
    main.push(Step::tool_call(
        "delegate",
        json!({"agent": "reviewer", "prompt": prompt, "background": true}),
    ));
    main.push(Step::text(ack));
    (main, reviewer, sandbox, gw, port)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_result_is_announced_in_the_originating_thread() {
    let (_main, reviewer, _sandbox, gw, _) =
        with_background_task("audit the logs", "On it; I will report back here.").await;
    reviewer.push(
        Step::text("No anomalies found.")
            .delay(Duration::from_millis(300))
            .usage(1500, 300),
    );
    gw.send_in_thread(
        "team",
        "general",
        "incident-42",
        "cli:bob",
        "@bot audit the logs in the background",
    )
    .await;
    let mut cursor = 0;
    let ack = gw.wait_for("team", &mut cursor, 20, |e| e["kind"] == "message").await;
    assert_eq!(ack["text"], "On it; I will report back here.");
    assert_eq!(ack["thread"], "incident-42");
    let announced = gw.wait_for("team", &mut cursor, 20, |e| e["kind"] == "message").await;
    assert_eq!(
        (announced["chat"].as_str(), announced["thread"].as_str()),
        (Some("general"), Some("incident-42"))
    );
    let text = announced["text"].as_str().unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "Status: success", "{text}");
    assert_eq!(lines[1], "Result: [Agent 'reviewer' (openai/prev-model)]");
    assert_eq!(lines[2], "No anomalies found.");
    assert_eq!(lines[3], "Notes: agent reviewer via delegate");
    assert!(
        lines[4].starts_with("runtime ") && lines[4].contains("tokens 1.5k in / 300 out / 1.8k total"),
        "{text}"
    );
    assert!(
        lines[5].starts_with("sessionKey agent:reviewer:delegate:") && lines[5].contains(" • sessionId "),
        "{text}"
    );
    // Exactly once.
    tokio::time::sleep(Duration::from_millis(800)).await;
    let all = gw.events("team", 0).await;
    assert_eq!(
        all.iter()
            .filter(|e| e["text"].as_str().unwrap_or("").starts_with("Status:"))
            .count(),
        1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_lost_to_a_crash_is_announced_once_after_restart() {
    let (_main, reviewer, sandbox, mut gw, port) = with_background_task("long audit", "Started.").await;
    reviewer.push(Step::text("too late").delay(Duration::from_secs(120)));
    gw.send_in_thread("team", "general", "t-7", "cli:bob", "@bot long audit please")
        .await;
    let mut cursor = 0;
    gw.wait_for("team", &mut cursor, 20, |e| e["text"] == "Started.").await;
    // Killed while the task runs, not in the instant between the reply
    // reaching the chat and its delivered mark (docs: the one window of
    // at-least-once delivery, which would show "Started." again).
    tokio::time::sleep(Duration::from_millis(500)).await;
    gw.kill();

    let gw = Gateway::start(&sandbox, port, "team").await;
    let mut cursor = 0;
    let lost = gw.wait_for("team", &mut cursor, 20, |e| e["kind"] == "message").await;
    assert_eq!(lost["thread"], "t-7");
    let text = lost["text"].as_str().unwrap();
    assert!(text.starts_with("Status: unknown\nResult: (not available)\nNotes: the gateway stopped while this run was active; run lost; agent reviewer via delegate"), "{text}");
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(gw.events("team", 0).await.len(), 1, "announced exactly once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_announcement_pending_at_a_crash_is_delivered_once_after_restart() {
    let (_main, reviewer, sandbox, mut gw, port) = with_background_task("quick check", "Checking.").await;
    reviewer.push(Step::text("All good.").delay(Duration::from_millis(300)));
    gw.send_in_thread("team", "general", "t-9", "cli:bob", "@bot quick check")
        .await;
    let mut cursor = 0;
    gw.wait_for("team", &mut cursor, 20, |e| e["text"] == "Checking.").await;
    // The platform goes down before the result is ready: the announcement waits.
    gw.outage("team", true).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(reviewer.requests().len(), 1, "the task ran");
    assert_eq!(gw.events("team", cursor).await.len(), 0, "nothing could be delivered");
    gw.kill();

    let gw = Gateway::start(&sandbox, port, "team").await;
    let mut cursor = 0;
    let e = gw.wait_for("team", &mut cursor, 20, |e| e["kind"] == "message").await;
    assert_eq!(e["thread"], "t-9");
    assert!(
        e["text"]
            .as_str()
            .unwrap()
            .starts_with("Status: success\nResult: [Agent 'reviewer' (openai/prev-model)]\nAll good."),
        "{e}"
    );
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(gw.events("team", 0).await.len(), 1, "delivered exactly once");
}

/// A second process on the same database (`switchboard chat` beside the
/// running gateway) does not mark the gateway's work lost: the task still
/// finishes and is announced once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_process_on_the_same_database_leaves_running_work_alone() {
    let (_main, reviewer, sandbox, gw, _) = with_background_task("slow audit", "Started.").await;
    reviewer.push(Step::text("Audit clean.").delay(Duration::from_secs(3)));
    gw.send("team", "general", "cli:bob", "audit please", true, true).await;
    let mut cursor = 0;
    let ack = gw.wait_for("team", &mut cursor, 20, |e| e["kind"] == "message").await;
    assert_eq!(ack["text"], "Started.");
    // `chat` starts on the same file while the task runs, and quits.
    let chat = sandbox.chat(&[]);
    let (code, _) = chat.finish();
    assert_eq!(code, 0);
    let announced = gw
        .wait_for("team", &mut cursor, 20, |e| {
            e["text"].as_str().unwrap_or("").starts_with("Status:")
        })
        .await;
    let text = announced["text"].as_str().unwrap();
    assert!(text.starts_with("Status: success\nResult: [Agent 'reviewer'"), "{text}");
    assert!(text.contains("Audit clean."), "{text}");
    tokio::time::sleep(Duration::from_millis(800)).await;
    let all = gw.events("team", 0).await;
    let statuses = all
        .iter()
        .filter(|e| e["text"].as_str().unwrap_or("").starts_with("Status:"))
        .count();
    assert_eq!(statuses, 1, "announced once");
}
