//! `delegate` in the background (task lifecycle, waiting, visibility) and
//! what a bounded child may do, through the real loop.

mod common;
mod delegation_fx;

use common::*;
use delegation_fx::*;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use switchboard_runtime::NoApprover;
use switchboard_test_support::Step;

#[tokio::test]
async fn background_task_lifecycle() {
    let f = fx("").await;
    f.reviewer.push(Step::tool_call("memory_recall", json!({"query": "x"})));
    f.reviewer
        .push(Step::text("bg result").delay(Duration::from_millis(300)));
    let started = f
        .delegate(json!({"agent": "reviewer", "prompt": "long job", "background": true}))
        .await;
    let id = task_id_of(&started);
    assert_eq!(
        started,
        format!(
            "Background task started for agent 'reviewer'.\ntask_id: {id}\nUse action='check_result' with task_id='{id}' to retrieve the result."
        )
    );
    // Wait for it, then check the result and the artifact.
    let awaited = f
        .delegate(json!({"action": "await_sessions", "task_ids": [id], "timeout_ms": 10000}))
        .await;
    let v: Value = serde_json::from_str(&awaited).unwrap();
    assert_eq!(v["status"], "complete");
    assert_eq!(v["completed"], json!([id]));
    let checked: Value =
        serde_json::from_str(&f.delegate(json!({"action": "check_result", "task_id": id})).await).unwrap();
    assert_eq!(checked["status"], "completed");
    assert_eq!(checked["output"], "[Agent 'reviewer' (openai/prev-model)]\nbg result");
    let p = &checked["progress"];
    assert_eq!(p["iterations"], 2);
    assert_eq!(p["tools_completed"], 1);
    assert_eq!(p["last_tool"]["name"], "memory_recall");
    assert_eq!(p["last_tool"]["success"], true);
    assert!(p["elapsed_secs"].is_u64());
    assert!(p["receipt_tail"][0].as_str().unwrap().starts_with("memory_recall: "));
    let stored = p.to_string();
    assert!(
        !stored.contains("long job") && !stored.contains("bg result"),
        "progress leaks content: {stored}"
    );
    let artifact = f.h.records("main").join(format!("delegate_results/{id}.json"));
    let a: Value = serde_json::from_str(&std::fs::read_to_string(artifact).unwrap()).unwrap();
    assert_eq!(
        a,
        json!({"task_id": id, "output": "[Agent 'reviewer' (openai/prev-model)]\nbg result"})
    );
    let listed: Value = serde_json::from_str(&f.delegate(json!({"action": "list_results"})).await).unwrap();
    assert_eq!(listed["tasks"][0]["task_id"], id);
    // The artifact is kept out of the agent's workspace: its tools (in any
    // chat) cannot read it.
    assert!(!f.h.workspace("main").join("delegate_results").exists());
    f.main.push(Step::tool_call(
        "file_read",
        json!({"path": format!("../.records/main/delegate_results/{id}.json")}),
    ));
    f.main.push(Step::text("done"));
    f.h.turn("peek", Arc::new(NoApprover("none".into()))).await.unwrap();
    assert!(
        last_tool_result(&f.main).contains("is outside the agent workspace"),
        "{}",
        last_tool_result(&f.main)
    );
}

#[tokio::test]
async fn await_sessions_timeout_duplicates_and_missing() {
    let f = fx("").await;
    f.reviewer.push(Step::text("slow").delay(Duration::from_secs(5)));
    let id = task_id_of(
        &f.delegate(json!({"agent": "reviewer", "prompt": "x", "background": true}))
            .await,
    );
    assert_eq!(
        f.delegate(json!({"action": "await_sessions", "task_ids": [id, id]}))
            .await,
        error(&format!("Duplicate task_id '{id}' in task_ids; list each task once"))
    );
    let ghost = uuid::Uuid::new_v4().to_string();
    let out = f
        .delegate(json!({"action": "await_sessions", "task_ids": [id, ghost], "timeout_ms": 200}))
        .await;
    let (err, body) = out.split_once('\n').unwrap();
    assert_eq!(err, "Error: one or more tasks are still pending or missing");
    let v: Value = serde_json::from_str(body).unwrap();
    assert_eq!(v["status"], "timeout");
    assert_eq!(v["pending"], json!([id]));
    assert_eq!(v["missing"], json!([ghost]));
    assert!(v["results"][&id]["progress"].is_object() || v["results"][&id]["progress"].is_null());
    let cancelled = f.delegate(json!({"action": "cancel_task", "task_id": id})).await;
    assert_eq!(cancelled, format!("Task '{id}' cancelled."));
}

#[tokio::test]
async fn tasks_outside_the_callers_chain_are_invisible() {
    // ops (allowed to delegate here) starts its own turn and tries to see
    // and cancel a task main started.
    let f2 = fx_with("", |c| {
        c.risk_profiles.get_mut("opsprof").unwrap().delegation_policy.mode = switchboard_config::DelegationMode::Allow;
    })
    .await;
    f2.reviewer.push(Step::text("slow").delay(Duration::from_secs(5)));
    let id = task_id_of(
        &f2.delegate(json!({"agent": "reviewer", "prompt": "x", "background": true}))
            .await,
    );
    f2.ops.push(Step::tool_call(
        "delegate",
        json!({"action": "cancel_task", "task_id": id}),
    ));
    f2.ops.push(Step::tool_call(
        "delegate",
        json!({"action": "check_result", "task_id": id}),
    ));
    f2.ops.push(Step::text("no luck"));
    f2.h.runtime
        .run_turn(switchboard_runtime::TurnRequest::new(
            "ops",
            "agent:ops:cli:x",
            "snoop",
            Arc::new(NoApprover("none".into())),
        ))
        .await
        .unwrap();
    let results = tool_results(f2.ops.requests().last().unwrap());
    assert_eq!(results[0], error(&format!("No result found for task_id '{id}'")));
    assert_eq!(results[1], error(&format!("No result found for task_id '{id}'")));
    let row = f2.h.runtime.store().runs().get(&id).await.unwrap().unwrap();
    assert_eq!(row.status.as_str(), "running", "the task must still be running");
}

/// A task asked for in one session of an agent (a person's DM) is not
/// read, listed or cancelled from another session of it (a group).
#[tokio::test]
async fn tasks_of_another_session_of_the_same_agent_are_invisible() {
    let f = fx("").await;
    f.reviewer.push(Step::text("slow").delay(Duration::from_secs(5)));
    let dm = "agent:main:telegram.main:42";
    let group = "agent:main:telegram.main:-1001";
    let start = json!({"agent": "reviewer", "prompt": "x", "background": true});
    let id = task_id_of(&f.delegate_in(dm, start).await);
    for action in ["check_result", "cancel_task"] {
        assert_eq!(
            f.delegate_in(group, json!({"action": action, "task_id": id})).await,
            error(&format!("No result found for task_id '{id}'")),
            "{action}"
        );
    }
    let listed = |out: String| -> Vec<String> {
        let v: Value = serde_json::from_str(&out).unwrap();
        v["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["task_id"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(listed(f.delegate_in(group, json!({"action": "list_results"})).await).is_empty());
    assert_eq!(
        listed(f.delegate_in(dm, json!({"action": "list_results"})).await),
        std::slice::from_ref(&id)
    );
    let checked: Value = serde_json::from_str(
        &f.delegate_in(dm, json!({"action": "check_result", "task_id": id}))
            .await,
    )
    .unwrap();
    assert_eq!(checked["status"], "running", "the task must still be running");
}

/// A task a child started (and passed its id up) is the parent's to see in
/// the session that started the child, not in another.
#[tokio::test]
async fn a_task_a_child_started_is_seen_in_the_session_that_started_the_child() {
    let f = fx_with("", |c| {
        let reviewer = c.agents.get_mut("reviewer").unwrap();
        reviewer.delegates = vec![switchboard_config::DelegateEntry::Alias("ops".into())];
    })
    .await;
    f.reviewer.push(Step::tool_call(
        "delegate",
        json!({"agent": "ops", "prompt": "slow sweep", "background": true}),
    ));
    f.ops.push(Step::text("swept").delay(Duration::from_secs(5)));
    f.reviewer
        .push(Step::text("started a sweep").when_last_contains("Background task started"));
    let dm = "agent:main:telegram.main:42";
    let asked = f
        .delegate_in(dm, json!({"agent": "reviewer", "prompt": "start a sweep"}))
        .await;
    assert!(asked.contains("started a sweep"), "{asked}");
    let rows =
        f.h.runtime
            .store()
            .runs()
            .owned_by(switchboard_store::RunKind::Delegate, "main", 10)
            .await
            .unwrap();
    let task = rows
        .iter()
        .find(|r| r.agent == "ops")
        .unwrap_or_else(|| panic!("no task of ops in {rows:?}"))
        .id
        .clone();
    let checked = f
        .delegate_in(dm, json!({"action": "check_result", "task_id": task}))
        .await;
    assert!(checked.contains("\"status\":\"running\""), "{checked}");
    let group = "agent:main:telegram.main:-1001";
    assert_eq!(
        f.delegate_in(group, json!({"action": "check_result", "task_id": task}))
            .await,
        error(&format!("No result found for task_id '{task}'"))
    );
}

#[tokio::test]
async fn a_bounded_childs_delegate_may_only_delegate() {
    let f = fx("").await;
    let id = uuid::Uuid::new_v4().to_string();
    f.reviewer.push(Step::tool_call(
        "delegate",
        json!({"action": "check_result", "task_id": id}),
    ));
    f.reviewer.push(Step::text("ok"));
    f.delegate(json!({"agent": "reviewer", "prompt": "x"})).await;
    assert_eq!(
        last_tool_result(&f.reviewer),
        error(
            "check_result is not available inside a delegated run: task management belongs to the agent that started the task; pass the task_id up to it"
        )
    );
    // Its schema lists the roster of the target's identity, not the caller's.
    let tools = f.reviewer.requests()[0]["tools"].as_array().unwrap().clone();
    let d = tools.iter().find(|t| t["function"]["name"] == "delegate").unwrap();
    assert_eq!(
        d["function"]["parameters"]["properties"]["agent"]["description"],
        "The agent to delegate to. Reachable agents: main"
    );
}

#[tokio::test]
async fn a_bounded_child_shares_the_callers_hourly_budget() {
    let f = fx_with("[runtime_profiles.default]\nmax_actions_per_hour = 2\n", |_| {}).await;
    // The child spends the caller's two actions; the caller has none left.
    f.reviewer.push(Step::tool_call("memory_recall", json!({"query": "a"})));
    f.reviewer.push(Step::tool_call("memory_recall", json!({"query": "b"})));
    f.reviewer.push(Step::tool_call("memory_recall", json!({"query": "c"})));
    f.reviewer.push(Step::text("child done"));
    f.main
        .push(Step::tool_call("delegate", json!({"agent": "reviewer", "prompt": "x"})));
    f.main.push(Step::tool_call("memory_recall", json!({"query": "after"})));
    f.main.push(Step::text("done"));
    f.h.turn("go", Arc::new(NoApprover("none".into()))).await.unwrap();
    let child = tool_results(f.reviewer.requests().last().unwrap());
    assert!(
        child[2].contains("action budget spent: 2 actions in the last hour"),
        "{child:?}"
    );
    assert!(
        last_tool_result(&f.main).contains("action budget spent"),
        "{}",
        last_tool_result(&f.main)
    );
}

/// The task id in a background delegation's tool result.
fn task_id_of(out: &str) -> String {
    out.lines()
        .nth(1)
        .unwrap()
        .strip_prefix("task_id: ")
        .unwrap()
        .to_string()
}
