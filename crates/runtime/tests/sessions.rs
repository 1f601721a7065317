//! `sessions_spawn` and announcements (docs/delegation.md) through the real loop.

mod common;
mod sessions_fx;

use common::*;
use serde_json::{Value, json};
use sessions_fx::*;
use std::time::Duration;
use switchboard_store::RunKind;
use switchboard_test_support::{Step, offered_tools};

#[tokio::test]
async fn spawn_returns_at_once_and_the_result_is_announced_in_the_thread() {
    let f = fx("").await;
    f.main.push(Step::tool_call(
        "sessions_spawn",
        json!({"task": "summarise the logs", "agentId": "worker", "label": "logs"}),
    ));
    f.main.push(Step::text("Started a helper."));
    f.work.push(
        Step::text("Logs are clean.")
            .when_last_contains("summarise the logs")
            .delay(Duration::from_millis(300)),
    );
    f.work
        .push(Step::text("The logs are clean.").when_last_contains("Write the announcement"));
    assert_eq!(f.turn("@bot summarise in the background").await, "Started a helper.");
    let result = last_tool_result(&f.main);
    let (run_id, key) = accepted(&result);
    assert_eq!(
        result,
        format!(r#"{{"childSessionKey":"{key}","runId":"{run_id}","status":"accepted"}}"#)
    );
    assert_eq!(key, format!("agent:worker:subagent:{run_id}"));
    assert_eq!(
        f.store().runs().get(&run_id).await.unwrap().unwrap().status.as_str(),
        "running",
        "the turn did not wait"
    );
    assert_eq!(f.wait_ended(&run_id).await, "completed");
    let due = f.store().outbox().due(10).await.unwrap();
    assert_eq!(due.len(), 1);
    let a = &due[0];
    assert_eq!(
        (a.channel.as_str(), a.chat.as_str(), a.thread.as_deref()),
        ("local.team", "general", Some("t1"))
    );
    assert!(
        a.body.starts_with("Status: success\nResult: The logs are clean.\n"),
        "{}",
        a.body
    );
    assert!(
        a.body
            .contains(&format!("sessionKey {key} • sessionId {run_id} • transcript ")),
        "{}",
        a.body
    );
    // The main session received it as fenced data.
    let history = f
        .store()
        .sessions()
        .history("agent:main:local.team:general:t1", 50)
        .await
        .unwrap();
    let last: Value = serde_json::from_str(&history.last().unwrap().body).unwrap();
    assert!(
        last["content"]
            .as_str()
            .unwrap()
            .contains("```untrusted\nStatus: success"),
        "{last}"
    );
    // The transcript file exists until archived.
    let transcript = f.h.records("worker").join(format!("sessions/{run_id}.jsonl"));
    for _ in 0..100 {
        if transcript.exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(transcript.exists());
}

#[tokio::test]
async fn announce_skip_posts_nothing() {
    let f = fx("").await;
    f.main.push(Step::tool_call(
        "sessions_spawn",
        json!({"task": "quiet job", "agentId": "worker"}),
    ));
    f.main.push(Step::text("ok"));
    f.work.push(Step::text("done quietly").when_last_contains("quiet job"));
    f.work
        .push(Step::text("ANNOUNCE_SKIP").when_last_contains("Write the announcement"));
    f.turn("go").await;
    let (run_id, _) = accepted(&last_tool_result(&f.main));
    for _ in 0..100 {
        if f.work.remaining() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        f.store().runs().get(&run_id).await.unwrap().unwrap().status.as_str(),
        "completed"
    );
    assert!(f.store().outbox().of_run(&run_id).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_depth_two_result_reaches_the_user_only_through_its_orchestrator() {
    let f = fx("").await;
    // main -> orchestrator (worker, depth 1) -> leaf (worker, depth 2)
    f.main.push(Step::tool_call(
        "sessions_spawn",
        json!({"task": "orchestrate the audit", "agentId": "worker"}),
    ));
    f.main.push(Step::text("Orchestrator started."));
    f.work.push(
        Step::tool_call("sessions_spawn", json!({"task": "leaf: count errors"}))
            .when_last_contains("orchestrate the audit"),
    );
    f.work.push(
        Step::text("7 errors")
            .when_last_contains("leaf: count errors")
            .delay(Duration::from_millis(100)),
    );
    f.work.push(
        Step::text("Leaf says 7 errors.")
            .when_last_contains("Write the announcement")
            .when(|r| r.to_string().contains("leaf: count errors")),
    );
    // The orchestrator waits a little, then sees the leaf's announcement as data.
    f.work.push(
        Step::tool_call("memory_recall", json!({"query": "x"}))
            .when_last_contains("\"status\":\"accepted\"")
            .delay(Duration::from_millis(700)),
    );
    f.work
        .push(Step::text("Audit done: 7 errors.").when(|r| r.to_string().contains("announcement from child session")));
    f.work
        .push(Step::text("The audit found 7 errors.").when_last_contains("Write the announcement"));
    f.turn("audit").await;
    let (orchestrator, _) = accepted(&last_tool_result(&f.main));
    assert_eq!(f.wait_ended(&orchestrator).await, "completed");
    let runs = f
        .store()
        .runs()
        .owned_by(RunKind::SessionsSpawn, "main", 10)
        .await
        .unwrap();
    assert_eq!(runs.len(), 2);
    let leaf = runs.iter().find(|r| r.depth == 2).unwrap();
    assert!(
        f.store().outbox().of_run(&leaf.id).await.unwrap().is_empty(),
        "the leaf never posts to the chat"
    );
    let due = f.store().outbox().due(10).await.unwrap();
    assert_eq!(due.len(), 1);
    assert_eq!(due[0].delivery_key, orchestrator);
    assert!(
        due[0]
            .body
            .starts_with("Status: success\nResult: The audit found 7 errors."),
        "{}",
        due[0].body
    );
    // Tools per depth: the orchestrator may spawn, the leaf may not; deny lists apply.
    let reqs = f.work.requests();
    let orch_tools = offered_tools(&reqs[0]);
    assert!(
        orch_tools.contains(&"sessions_spawn".to_string()) && !orch_tools.contains(&"shell".to_string()),
        "{orch_tools:?}"
    );
    let leaf_req = reqs
        .iter()
        .find(|r| r.to_string().contains("leaf: count errors") && !r.to_string().contains("orchestrate"))
        .unwrap();
    let leaf_tools = offered_tools(leaf_req);
    assert!(
        !leaf_tools
            .iter()
            .any(|t| t.starts_with("sessions_") || t == "agents_list"),
        "{leaf_tools:?}"
    );
}

#[tokio::test]
async fn refusals_limits_and_model_warning() {
    let f = fx("").await;
    f.main.push(Step::tool_calls(&[
        ("sessions_spawn", r#"{"task": "t", "agentId": "other"}"#),
        ("sessions_spawn", r#"{"task": ""}"#),
        (
            "sessions_spawn",
            r#"{"task": "slow 1", "agentId": "worker", "model": "nope"}"#,
        ),
        ("sessions_spawn", r#"{"task": "slow 2", "agentId": "worker"}"#),
        ("sessions_spawn", r#"{"task": "slow 3", "agentId": "worker"}"#),
    ]));
    for _ in 0..3 {
        f.work.push(Step::text("late").delay(Duration::from_secs(5)));
    }
    f.main.push(Step::tool_call(
        "sessions_spawn",
        json!({"task": "one too many", "agentId": "worker"}),
    ));
    f.main.push(Step::text("ok"));
    f.turn("go").await;
    let reqs = f.main.requests();
    let first = tool_results(&reqs[1]);
    assert_eq!(
        first[0],
        "Error: agentId 'other' is not allowed by [agents.main.subagents].allow_agents; allowed: main, worker"
    );
    assert_eq!(first[1], "Error: Missing or empty 'task' parameter");
    let v: Value = serde_json::from_str(&first[2]).unwrap();
    assert_eq!(v["warning"], "unknown model 'nope'; using the default provider 'pwork'");
    assert_eq!(
        tool_results(&reqs[2]).last().unwrap(),
        "Error: sessions_spawn: 3 child sessions are already active here ([agents.main.subagents].max_children_per_agent = 3); wait for one to end or kill it"
    );
}

/// Six spawns in one answer run side by side; the per-session cap of
/// three still holds (each spawn counts and records under the session's
/// lock).
#[tokio::test]
async fn max_children_holds_under_parallel_spawns() {
    let f = fx("").await;
    let calls: Vec<(String, String)> = (0..6)
        .map(|i| {
            (
                "sessions_spawn".into(),
                format!(r#"{{"task": "parallel {i}", "agentId": "worker"}}"#),
            )
        })
        .collect();
    let refs: Vec<(&str, &str)> = calls.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    f.main.push(Step::tool_calls(&refs));
    for _ in 0..6 {
        f.work.push(Step::text("late").delay(Duration::from_secs(5)));
    }
    f.main.push(Step::text("ok"));
    f.turn("go").await;
    let results = tool_results(&f.main.requests()[1]);
    let refused = results
        .iter()
        .filter(|r| r.contains("child sessions are already active here"))
        .count();
    assert_eq!((results.len(), refused), (6, 3), "{results:?}");
}

#[tokio::test]
async fn the_lane_never_runs_more_than_max_concurrent() {
    let f = fx("[lanes.subagent]\nmax_concurrent = 2\n").await;
    // Three children (the per-session cap) for a lane of two.
    let calls: Vec<(String, String)> = (0..3)
        .map(|i| {
            (
                "sessions_spawn".into(),
                format!(r#"{{"task": "lane job {i}", "agentId": "worker"}}"#),
            )
        })
        .collect();
    let refs: Vec<(&str, &str)> = calls.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    f.main.push(Step::tool_calls(&refs));
    f.main.push(Step::text("all queued"));
    for i in 0..3 {
        f.work.push(
            Step::text(format!("job {i} done"))
                .when_last_contains(&format!("lane job {i}"))
                .delay(Duration::from_millis(250)),
        );
        f.work
            .push(Step::text("ANNOUNCE_SKIP").when_last_contains("Write the announcement"));
    }
    f.turn("fan out").await;
    for _ in 0..200 {
        if f.work.remaining() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(f.work.remaining(), 0, "every queued child ran");
    assert_eq!(f.work.max_in_flight(), 2, "the lane held the rest back");
}

#[tokio::test]
async fn cleanup_delete_archives_the_transcript_right_after_the_announce() {
    let f = fx("").await;
    f.main.push(Step::tool_call(
        "sessions_spawn",
        json!({"task": "tidy", "agentId": "worker", "cleanup": "delete"}),
    ));
    f.main.push(Step::text("ok"));
    f.work.push(Step::text("tidied").when_last_contains("tidy"));
    f.work
        .push(Step::text("Tidied up.").when_last_contains("Write the announcement"));
    f.turn("go").await;
    let (run_id, _) = accepted(&last_tool_result(&f.main));
    let dir = f.h.records("worker").join("sessions");
    let mut archived = None;
    for _ in 0..200 {
        archived = std::fs::read_dir(&dir).ok().and_then(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().to_string())
                .find(|n| n.starts_with(&run_id))
        });
        if archived.as_deref().is_some_and(|n| n.contains(".deleted.")) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let name = archived.expect("a transcript file");
    assert!(name.starts_with(&format!("{run_id}.jsonl.deleted.")), "{name}");
}

#[tokio::test]
async fn the_parent_can_message_list_and_kill_its_children() {
    let f = fx("").await;
    f.main.push(Step::tool_call(
        "sessions_spawn",
        json!({"task": "long job", "agentId": "worker", "label": "long"}),
    ));
    // The child takes a step, then hangs on its second model call.
    f.work.push(
        Step::tool_call("memory_recall", json!({"query": "x"}))
            .when_last_contains("long job")
            .delay(Duration::from_millis(300)),
    );
    f.work.push(
        Step::text("never")
            .when(|r| {
                r.to_string()
                    .contains("Message from the session that started you (main): stop early")
            })
            .delay(Duration::from_secs(60)),
    );
    f.main.push(Step::text("spawned").when_last_contains("accepted"));
    f.turn("start").await;
    let (run_id, key) = accepted(&tool_results(&f.main.requests()[1])[0]);
    f.main.push(Step::tool_call(
        "sessions_send",
        json!({"sessionKey": key, "message": "stop early"}),
    ));
    f.main
        .push(Step::tool_call("subagents", json!({"action": "list"})).when_last_contains("(running)"));
    f.main.push(Step::text("sent").when_last_contains("\"children\""));
    f.turn("tell it").await;
    let results = tool_results(f.main.requests().last().unwrap());
    let n = results.len();
    assert_eq!(
        results[n - 2],
        format!("delivered to {key} (running); it sees the message at its next step")
    );
    let list: Value = serde_json::from_str(&results[n - 1]).unwrap();
    assert_eq!(list["children"][0]["label"], "long");
    // Wait until the child is hanging on the call that saw the message.
    for _ in 0..200 {
        if f.work.in_flight() == 1 && f.work.remaining() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(f.work.remaining(), 0, "the child's second call saw the message");
    f.main
        .push(Step::tool_call("subagents", json!({"action": "kill", "runId": run_id})));
    f.main.push(Step::text("killed").when_last_contains("killed 1 run(s)"));
    assert_eq!(f.turn("kill it").await, "killed");
    assert_eq!(
        f.store().runs().get(&run_id).await.unwrap().unwrap().status.as_str(),
        "cancelled"
    );
    for _ in 0..50 {
        if f.work.in_flight() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(f.work.in_flight(), 0, "the hanging call was cut");
}

#[tokio::test]
async fn a_late_leaf_result_wakes_its_finished_orchestrator_and_reaches_the_chat() {
    let f = fx("").await;
    script_a_late_leaf(&f);
    // The woken orchestrator passes the result on.
    f.work
        .push(Step::text("Late result: the leaf found 42.").when_last_contains("this result arrived since"));
    f.turn("go").await;
    let (orchestrator, _) = accepted(&last_tool_result(&f.main));
    let due = two_due(&f).await;
    assert_eq!(due.len(), 2, "{due:?}");
    assert_eq!(due[0].delivery_key, orchestrator);
    assert!(due[0].body.contains("Result: The leaf is running."), "{}", due[0].body);
    assert!(
        due[1].delivery_key.ends_with(&format!(">{orchestrator}")),
        "{}",
        due[1].delivery_key
    );
    assert!(
        due[1].body.contains("Result: Late result: the leaf found 42."),
        "{}",
        due[1].body
    );
    assert_eq!(
        (due[1].chat.as_str(), due[1].thread.as_deref()),
        ("general", Some("t1"))
    );
}

/// The same, the woken orchestrator's model failing: the leaf's result is
/// passed on as it is rather than dropped.
#[tokio::test]
async fn a_late_leaf_result_reaches_the_chat_when_its_orchestrator_cannot_be_woken() {
    let f = fx("").await;
    script_a_late_leaf(&f);
    // No step answers the woken orchestrator: its model call fails.
    f.turn("go").await;
    let (orchestrator, _) = accepted(&last_tool_result(&f.main));
    let due = two_due(&f).await;
    assert_eq!(due.len(), 2, "{due:?}");
    assert!(due[1].delivery_key.ends_with(&format!(">{orchestrator}")));
    assert!(
        due[1].body.contains("A result arrived after this task ended") && due[1].body.contains("Leaf reports 42."),
        "{}",
        due[1].body
    );
}

/// An orchestrator child that spawns a slow leaf and ends at once (its
/// announcement: "The leaf is running."); the leaf's announce step says
/// "Leaf reports 42." once it finishes.
fn script_a_late_leaf(f: &Fx) {
    f.main.push(Step::tool_call(
        "sessions_spawn",
        json!({"task": "orchestrate quickly", "agentId": "worker"}),
    ));
    f.main.push(Step::text("ok").when_last_contains("accepted"));
    f.work.push(
        Step::tool_call("sessions_spawn", json!({"task": "slow leaf"})).when_last_contains("orchestrate quickly"),
    );
    f.work
        .push(Step::text("Leaf started; I am done.").when_last_contains("\"status\":\"accepted\""));
    f.work.push(Step::text("The leaf is running.").when(|r| {
        let t = r.to_string();
        t.contains("Write the announcement") && t.contains("orchestrate quickly") && !t.contains("slow leaf finished")
    }));
    f.work.push(
        Step::text("slow leaf finished: 42")
            .when_last_contains("slow leaf")
            .delay(Duration::from_millis(400)),
    );
    f.work.push(Step::text("Leaf reports 42.").when(|r| {
        let t = r.to_string();
        t.contains("Write the announcement") && t.contains("slow leaf finished")
    }));
}

/// The outbox once it holds two announcements (10 s at most).
async fn two_due(f: &Fx) -> Vec<switchboard_store::OutboxRow> {
    let mut due = Vec::new();
    for _ in 0..400 {
        due = f.store().outbox().due(10).await.unwrap();
        if due.len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    due
}
