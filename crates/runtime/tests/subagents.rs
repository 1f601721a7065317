//! `spawn_subagent`, cancellation rules, the execution-tree
//! budget and per-hop cost caps (docs/delegation.md), through the real loop.

mod common;

use common::*;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use switchboard_runtime::{NoApprover, TurnError};
use switchboard_store::RunKind;
use switchboard_store::RunStatus;
use switchboard_test_support::{ScriptedModel, Step, offered_tools};
use tokio_util::sync::CancellationToken;

const MAIN: &str = r#"
[agents.main]
model_provider = "pmain"
risk_profile = "lead"
[agents.reviewer]
model_provider = "prev"
risk_profile = "lead"
[risk_profiles.lead]
level = "full"
delegation_policy = { mode = "allow" }
allowed_commands = ["echo", "rm"]
"#;

async fn setup(extra: &str) -> (ScriptedModel, ScriptedModel, Harness) {
    let main = ScriptedModel::start().await;
    let reviewer = ScriptedModel::start().await;
    let toml = format!(
        "{}{}{MAIN}{extra}",
        provider("pmain", &main.url(), ""),
        provider("prev", &reviewer.url(), "")
    );
    let h = harness(&toml).await;
    (main, reviewer, h)
}

fn none() -> Arc<NoApprover> {
    Arc::new(NoApprover("none".into()))
}

#[tokio::test]
async fn spawn_contract_strings() {
    let (main, _r, h) = setup("").await;
    // 1: empty prompt
    main.push(Step::tool_call("spawn_subagent", json!({"prompt": "  "})));
    main.push(Step::text("ok"));
    h.turn("a", none()).await.unwrap();
    assert_eq!(last_tool_result(&main), "Error: Missing or empty 'prompt' parameter");
    // 4: an override that escalates names the field
    main.push(Step::tool_call(
        "spawn_subagent",
        json!({"prompt": "p", "overrides": {"allowed_commands": ["echo", "curl"]}}),
    ));
    main.push(Step::text("ok"));
    h.turn("b", none()).await.unwrap();
    assert_eq!(
        last_tool_result(&main),
        "Error: subagent spawn failed: override of 'allowed_commands' would grant more than the parent ('curl' is not allowed for the parent)"
    );
    // 5: the child failed
    main.push(Step::tool_call("spawn_subagent", json!({"prompt": "child-5"})));
    main.push(Step::status(500).when_last_contains("child-5"));
    main.push(Step::text("ok"));
    h.turn("c", none()).await.unwrap();
    assert_eq!(
        last_tool_result(&main),
        "Error: subagent run failed: model provider 'pmain' failed with HTTP 500"
    );
    // 6: success, and empty output
    main.push(Step::tool_call("spawn_subagent", json!({"prompt": "child-6"})));
    main.push(Step::text("").when_last_contains("child-6"));
    main.push(Step::text("ok"));
    h.turn("d", none()).await.unwrap();
    assert_eq!(last_tool_result(&main), "subagent completed without output");
}

#[tokio::test]
async fn a_subagent_cannot_spawn_and_inherits_identity() {
    let (main, _r, h) = setup("").await;
    main.push(Step::tool_call("spawn_subagent", json!({"prompt": "child-task"})));
    // The child (same model server): tries to spawn, stores memory, answers.
    main.push(Step::tool_call("spawn_subagent", json!({"prompt": "grandchild"})).when_last_contains("child-task"));
    main.push(
        Step::tool_call("memory_store", json!({"key": "from-child", "content": "hello"}))
            .when_last_contains("may not spawn"),
    );
    main.push(Step::text("child answer").when_last_contains("stored memory"));
    main.push(Step::text("parent done").when_last_contains("child answer"));
    let reply = h.turn("go", none()).await.unwrap();
    assert_eq!(reply.text, "parent done");
    let reqs = main.requests();
    let child_first = &reqs[1];
    assert_eq!(
        tool_results(&reqs[2])[0],
        "Error: spawn_subagent: a subagent may not spawn its own subagents (depth-1 cap)"
    );
    assert!(!offered_tools(child_first).contains(&"model_switch".to_string()));
    assert!(offered_tools(&reqs[0]).contains(&"model_switch".to_string()));
    // Memory written by the child is the parent's.
    let rows = h
        .runtime
        .store()
        .memory()
        .recall(&["main".into()], "from-child", 5)
        .await
        .unwrap();
    assert_eq!(rows[0].agent, "main");
    // Only the final text returned; the child's transcript lives under subagent-<uuid>.
    assert_eq!(tool_results(&reqs[4])[0], "child answer");
}

#[tokio::test]
async fn profile_without_spawn_subagent_refuses() {
    let (main, _r, h) = setup("").await;
    let h2 = {
        drop(h);
        let toml = format!(
            "{}{}{}",
            provider("pmain", &main.url(), ""),
            provider("prev", &main.url(), ""),
            MAIN.replace(
                "level = \"full\"",
                "level = \"full\"\nallowed_tools = [\"memory_recall\"]"
            )
        );
        harness(&toml).await
    };
    main.push(Step::tool_call("spawn_subagent", json!({"prompt": "p"})));
    main.push(Step::text("ok"));
    h2.turn("go", none()).await.unwrap();
    assert!(!offered_tools(&main.requests()[0]).contains(&"spawn_subagent".to_string()));
    assert_eq!(
        last_tool_result(&main),
        "Error: spawn_subagent: refused — agent 'main' risk_profile does not list spawn_subagent in allowed_tools"
    );
}

#[tokio::test]
async fn several_spawns_in_one_turn_run_concurrently() {
    let (main, _r, h) = setup("").await;
    main.push(Step::tool_calls(&[
        ("spawn_subagent", r#"{"prompt": "job-1"}"#),
        ("spawn_subagent", r#"{"prompt": "job-2"}"#),
        ("spawn_subagent", r#"{"prompt": "job-3"}"#),
    ]));
    for i in 1..=3 {
        main.push(
            Step::text(format!("result-{i}"))
                .when_last_contains(&format!("job-{i}"))
                .delay(Duration::from_millis(400)),
        );
    }
    main.push(Step::text("all done"));
    assert_eq!(h.turn("fan out", none()).await.unwrap().text, "all done");
    assert_eq!(main.max_in_flight(), 3, "the three children overlapped");
    assert_eq!(
        tool_results(main.requests().last().unwrap()),
        ["result-1", "result-2", "result-3"]
    );
}

#[tokio::test]
async fn children_deny_dangerous_commands() {
    let (main, _r, h) = setup("").await;
    main.push(Step::tool_call("spawn_subagent", json!({"prompt": "cleanup"})));
    // Medium risk by classification (full autonomy would run it), but a
    // DROP TABLE in a child is denied without an operator.
    main.push(Step::tool_call("shell", json!({"command": "psql -c 'DROP TABLE users'"})).when_last_contains("cleanup"));
    main.push(Step::text("refused as expected").when_last_contains("dangerous"));
    main.push(Step::text("ok"));
    h.turn("go", none()).await.unwrap();
    let reqs = main.requests();
    assert_eq!(
        tool_results(&reqs[2])[0],
        "Error: shell refused: a dangerous command in a child run, with no operator to approve it. Do not retry it; say so in your result."
    );
}

/// Narrowing overrides are what the child's approval gate uses: spawned
/// `read_only`, it cannot write; with high-risk commands blocked, `rm -r`
/// is refused even though the parent's profile lets it through.
#[tokio::test]
async fn a_child_is_gated_by_its_narrowed_policy() {
    let (main, _r, h) = setup("block_high_risk_commands = false\n").await;
    main.push(Step::tool_call(
        "spawn_subagent",
        json!({"prompt": "read-only child", "overrides": {"level": "read_only"}}),
    ));
    main.push(
        Step::tool_call("file_write", json!({"path": "x.txt", "content": "no"})).when_last_contains("read-only child"),
    );
    main.push(Step::text("child 1 done").when_last_contains("may only read"));
    main.push(Step::tool_call(
        "spawn_subagent",
        json!({"prompt": "careful child", "overrides": {"block_high_risk_commands": true}}),
    ));
    main.push(Step::tool_call("shell", json!({"command": "rm -r old"})).when_last_contains("careful child"));
    main.push(Step::text("child 2 done").when_last_contains("blocked"));
    main.push(Step::text("ok"));
    h.turn("go", none()).await.unwrap();
    let results: Vec<String> = main.requests().iter().flat_map(tool_results).collect();
    assert!(
        results
            .iter()
            .any(|r| r.starts_with("Error: file_write refused") && r.contains("read-only")),
        "{results:?}"
    );
    assert!(
        results.iter().any(|r| r.contains("high-risk commands are blocked")),
        "{results:?}"
    );
    assert!(!h.workspace("main").join("x.txt").exists());
}

#[tokio::test]
async fn aborting_a_turn_stops_agentic_children_but_not_background_tasks() {
    let (main, reviewer, h) = setup("").await;
    // A background task that takes a while, then a foreground child that hangs.
    main.push(Step::tool_call(
        "delegate",
        json!({"agent": "reviewer", "prompt": "bg-job", "background": true}),
    ));
    reviewer.push(
        Step::text("bg finished")
            .when_last_contains("bg-job")
            .delay(Duration::from_millis(800)),
    );
    main.push(
        Step::tool_call("delegate", json!({"agent": "reviewer", "prompt": "fg-job"}))
            .when_last_contains("Background task started"),
    );
    reviewer.push(
        Step::text("never")
            .when_last_contains("fg-job")
            .delay(Duration::from_secs(30)),
    );
    let cancel = CancellationToken::new();
    let stopper = {
        let c = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(400)).await;
            c.cancel();
        })
    };
    let err = h.turn_with("work", none(), cancel).await.unwrap_err();
    stopper.await.unwrap();
    assert!(matches!(err, TurnError::Cancelled), "{err}");
    let store = h.runtime.store();
    let rows = store.runs().owned_by(RunKind::Delegate, "main", 10).await.unwrap();
    let fg = rows.iter().find(|r| r.task.as_deref() == Some("fg-job")).unwrap();
    assert_eq!(fg.status.as_str(), "cancelled");
    // The hanging model call was abandoned, not waited for.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        reviewer.in_flight(),
        1,
        "only the background call may still be in flight"
    );
    // The background task keeps going and completes.
    let bg_id = rows
        .iter()
        .find(|r| r.task.as_deref() == Some("bg-job"))
        .unwrap()
        .id
        .clone();
    let mut status = String::new();
    for _ in 0..100 {
        status = store.runs().get(&bg_id).await.unwrap().unwrap().status.to_string();
        if status != "running" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(status, "completed");
}

#[tokio::test]
async fn aborting_stops_parallel_children_and_spawned_subagents() {
    let (main, reviewer, h) = setup("[agents.third]\nmodel_provider = \"prev\"\nrisk_profile = \"lead\"\n").await;
    main.push(Step::tool_calls(&[
        (
            "delegate",
            r#"{"parallel": ["reviewer", "third"], "prompt": "par-job"}"#,
        ),
        ("spawn_subagent", r#"{"prompt": "sub-job"}"#),
    ]));
    reviewer.push(Step::text("slow").delay(Duration::from_secs(30)));
    reviewer.push(Step::text("slow").delay(Duration::from_secs(30)));
    main.push(
        Step::text("slow")
            .when_last_contains("sub-job")
            .delay(Duration::from_secs(30)),
    );
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(400)).await;
        c.cancel();
    });
    let err = h.turn_with("work", none(), cancel).await.unwrap_err();
    assert!(matches!(err, TurnError::Cancelled));
    let store = h.runtime.store();
    let delegates = store.runs().owned_by(RunKind::Delegate, "main", 10).await.unwrap();
    assert_eq!(delegates.len(), 2);
    assert!(
        delegates.iter().all(|r| r.status == RunStatus::Cancelled),
        "{:?}",
        delegates.iter().map(|r| &r.status).collect::<Vec<_>>()
    );
    let subs = store.runs().owned_by(RunKind::SpawnSubagent, "main", 10).await.unwrap();
    assert_eq!(subs[0].status.as_str(), "cancelled");
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(reviewer.in_flight() + main.in_flight(), 0, "no model call left running");
}

#[tokio::test]
async fn tree_budget_concurrent_reservations_never_overshoot() {
    let (main, _r, h) = setup("[runtime_profiles.default]\nmax_execution_tree_iterations = 4\n").await;
    let calls: Vec<(String, String)> = (0..6)
        .map(|i| ("spawn_subagent".to_string(), format!(r#"{{"prompt": "child-{i}"}}"#)))
        .collect();
    let refs: Vec<(&str, &str)> = calls.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    main.push(Step::tool_calls(&refs));
    for i in 0..6 {
        main.push(Step::text(format!("child {i} ok")).when_last_contains(&format!("child-{i}")));
    }
    main.push(Step::text("root final"));
    let reply = h.turn("go", none()).await.unwrap();
    assert_eq!(reply.text, "root final");
    let reqs = main.requests();
    let with_tools = reqs.iter().filter(|r| !offered_tools(r).is_empty()).count();
    assert!(with_tools <= 4, "{with_tools} tool iterations for a budget of 4");
    assert!(
        offered_tools(reqs.last().unwrap()).is_empty(),
        "the root ends with a tool-free completion"
    );
    let results = tool_results(reqs.last().unwrap());
    let ok = results.iter().filter(|r| r.ends_with(" ok")).count();
    let spent = results
        .iter()
        .filter(|r| {
            r.as_str()
                == "Error: subagent run failed: the execution tree budget is spent (max_execution_tree_iterations = 4)"
        })
        .count();
    assert_eq!((ok, spent), (2, 4), "{results:?}");
}

#[tokio::test]
async fn a_bounded_descendants_spend_blocks_the_ancestor() {
    let extra =
        "[runtime_profiles.capped]\nmax_cost_per_day_cents = 1\n[cost.prices.prev]\ninput = 10000.0\noutput = 0.0\n";
    let main = ScriptedModel::start().await;
    let reviewer = ScriptedModel::start().await;
    let toml = format!(
        "{}{}{}{extra}",
        provider("pmain", &main.url(), ""),
        provider("prev", &reviewer.url(), ""),
        MAIN.replace(
            "[agents.main]\nmodel_provider = \"pmain\"",
            "[agents.main]\nmodel_provider = \"pmain\"\nruntime_profile = \"capped\""
        )
    );
    let h = harness(&toml).await;
    main.push(Step::tool_call(
        "delegate",
        json!({"agent": "reviewer", "prompt": "expensive"}),
    ));
    reviewer.push(Step::text("costly answer").usage(10, 0));
    main.push(Step::text("never reached"));
    let err = h.turn("go", none()).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "agent 'main' reached its daily cost cap of 1 cents ([runtime_profiles.capped].max_cost_per_day_cents); it resets at UTC midnight"
    );
    assert_eq!(main.requests().len(), 1, "the ancestor made no further model call");
    let day = switchboard_store::utc_day(switchboard_store::now_ms());
    let spent = h.runtime.store().costs().of_agent("reviewer", &day).await.unwrap();
    assert_eq!(spent.cost_micros, 100_000, "metered under the target's alias");
    assert_eq!(
        h.runtime
            .store()
            .costs()
            .of_agent("main", &day)
            .await
            .unwrap()
            .cost_micros,
        0
    );
}

#[tokio::test]
async fn background_rows_become_lost_after_a_restart() {
    let (main, reviewer, h) = setup("").await;
    main.push(Step::tool_call(
        "delegate",
        json!({"agent": "reviewer", "prompt": "forever", "background": true}),
    ));
    reviewer.push(Step::text("late").delay(Duration::from_secs(60)));
    main.push(Step::text("started"));
    h.turn("go", none()).await.unwrap();
    let url = h.runtime.config().database_url.clone();
    let id = h
        .runtime
        .store()
        .runs()
        .owned_by(RunKind::Delegate, "main", 1)
        .await
        .unwrap()[0]
        .id
        .clone();
    assert_eq!(
        h.runtime
            .store()
            .runs()
            .get(&id)
            .await
            .unwrap()
            .unwrap()
            .status
            .as_str(),
        "running"
    );
    // A new process opening the same control plane settles what was left.
    let store = switchboard_store::Store::open(&url).await.unwrap();
    assert_eq!(store.reclaim(&[]).await.unwrap().lost_runs, vec![id.clone()]);
    assert_eq!(store.runs().get(&id).await.unwrap().unwrap().status.as_str(), "lost");
}
