//! The agent loop over real HTTP against the scripted model.

mod common;

use common::*;
use serde_json::json;
use std::sync::Arc;
use switchboard_runtime::{ApprovalOutcome, NoApprover};
use switchboard_test_support::{ScriptedModel, Step, offered_tools};

#[tokio::test]
async fn multi_step_loop_with_shell_file_and_memory() {
    let model = ScriptedModel::start().await;
    model.push(Step::tool_call(
        "file_write",
        json!({"path": "notes/todo.txt", "content": "ship it"}),
    ));
    model.push(Step::tool_call("shell", json!({"command": "ls notes"})));
    model.push(Step::tool_call(
        "memory_store",
        json!({"key": "todo", "content": "ship it"}),
    ));
    model.push(Step::tool_call("memory_recall", json!({"query": "ship"})));
    model.push(Step::text("Done: wrote the note.").usage(100, 20));
    let h = harness(&format!("{}{PROFILE}", provider("primary", &model.url(), ""))).await;
    let reply = h
        .turn("write my todo", Arc::new(NoApprover("none".into())))
        .await
        .unwrap();
    assert_eq!(reply.text, "Done: wrote the note.");
    assert_eq!(reply.iterations, 4);
    assert_eq!(reply.tools_completed, 4);
    assert_eq!(
        std::fs::read_to_string(h.workspace("main").join("notes/todo.txt")).unwrap(),
        "ship it"
    );
    let reqs = model.requests();
    assert_eq!(reqs.len(), 5);
    assert_eq!(reqs[0]["messages"][0]["role"], "system");
    let results = tool_results(&reqs[4]);
    assert!(results[0].starts_with("wrote 7 bytes"), "{results:?}");
    assert_eq!(results[1].trim(), "todo.txt");
    assert!(results[3].contains("[main] todo: ship it"), "{results:?}");
    // Excluded tools are never offered.
    for r in &reqs {
        let tools = offered_tools(r);
        assert!(tools.contains(&"shell".to_string()));
        assert!(!tools.contains(&"model_switch".to_string()), "{tools:?}");
    }
    // Usage was metered into the ledger.
    let day = switchboard_store::utc_day(switchboard_store::now_ms());
    let cost = h.runtime.store().costs().of_agent("main", &day).await.unwrap();
    assert_eq!(cost.calls, 5);
    assert_eq!(cost.tokens_in, 4 * 10 + 100);
}

#[tokio::test]
async fn supervised_call_waits_for_approval_and_deny_leaves_it_unrun() {
    let model = ScriptedModel::start().await;
    model.push(Step::tool_call(
        "file_write",
        json!({"path": "x.txt", "content": "token=abc"}),
    ));
    model.push(Step::text("ok"));
    let toml = main_on(&model.url(), "[risk_profiles.default]\nlevel = \"supervised\"\n");
    let h = harness(&toml).await;
    let broker = FixedBroker::new(ApprovalOutcome::Denied {
        by: "cli:ops".into(),
        reason: Some("not now".into()),
    });
    h.turn("write", broker.clone()).await.unwrap();
    assert_eq!(broker.count(), 1);
    let req = broker.seen.lock().unwrap()[0].clone();
    assert_eq!(req.tool, "file_write");
    assert!(!req.summary.contains("abc"), "secret leaked: {}", req.summary);
    assert!(!h.workspace("main").join("x.txt").exists());
    let results = tool_results(&model.requests()[1]);
    assert_eq!(
        results[0],
        "Error: file_write was not run: denied by cli:ops (not now)."
    );
}

#[tokio::test]
async fn unavailable_and_timeout_are_told_apart() {
    for (outcome, expected) in [
        (ApprovalOutcome::TimedOut { after_secs: 5 }, "timed out after 5s"),
        (
            ApprovalOutcome::Unavailable {
                why: "no approval route".into(),
            },
            "no approver could be asked (no approval route)",
        ),
    ] {
        let model = ScriptedModel::start().await;
        model.push(Step::tool_call("memory_store", json!({"key": "k", "content": "v"})));
        model.push(Step::text("ok"));
        let toml = main_on(&model.url(), "");
        let h = harness(&toml).await;
        h.turn("remember", FixedBroker::new(outcome)).await.unwrap();
        let results = tool_results(&model.requests()[1]);
        assert!(results[0].contains(expected), "{results:?}");
        assert!(!results[0].contains("denied by"), "{results:?}");
        assert!(
            h.runtime
                .store()
                .memory()
                .recall(&["main".into()], "", 5)
                .await
                .unwrap()
                .is_empty()
        );
    }
}

#[tokio::test]
async fn always_grants_cover_the_rest_of_the_run_only() {
    let model = ScriptedModel::start().await;
    model.push(Step::tool_call("memory_store", json!({"key": "a", "content": "1"})));
    model.push(Step::tool_call("memory_store", json!({"key": "b", "content": "2"})));
    model.push(Step::text("ok"));
    model.push(Step::tool_call("memory_store", json!({"key": "c", "content": "3"})));
    model.push(Step::text("ok"));
    let toml = main_on(&model.url(), "");
    let h = harness(&toml).await;
    let broker = FixedBroker::approving("cli:ops", true);
    h.turn("two", broker.clone()).await.unwrap();
    assert_eq!(broker.count(), 1, "the second call in the same run reuses the grant");
    h.turn("again", broker.clone()).await.unwrap();
    assert_eq!(broker.count(), 2, "a new run asks again");
}

/// "Always" for a low-risk `shell` call does not cover a medium- or
/// high-risk one later in the same run.
#[tokio::test]
async fn always_grants_are_per_tool_and_risk_class() {
    let model = ScriptedModel::start().await;
    model.push(Step::tool_call("shell", json!({"command": "ls"})));
    model.push(Step::tool_call("shell", json!({"command": "ls -la"})));
    model.push(Step::tool_call("shell", json!({"command": "rm notes.txt"})));
    model.push(Step::tool_call("shell", json!({"command": "git push --force"})));
    model.push(Step::text("ok"));
    let toml = main_on(
        &model.url(),
        "[risk_profiles.default]\nlevel = \"supervised\"\nallowed_commands = [\"ls\", \"rm\", \"git\"]\nblock_high_risk_commands = false\n",
    );
    let h = harness(&toml).await;
    let broker = FixedBroker::approving("cli:ops", true);
    h.turn("go", broker.clone()).await.unwrap();
    let risks: Vec<String> = broker.seen.lock().unwrap().iter().map(|r| r.risk.to_string()).collect();
    assert_eq!(
        risks,
        ["low", "medium", "high"],
        "ls -la reused the low grant; the others asked"
    );
}

#[tokio::test]
async fn provider_500_falls_back_without_leaking_details() {
    let primary = ScriptedModel::start().await;
    primary.push(Step::status(500));
    let backup = ScriptedModel::start().await;
    backup.push(Step::text("served by backup"));
    let h = harness(&with_fallback(&primary.url(), &backup.url(), "")).await;
    let reply = h.turn("hi", Arc::new(NoApprover("none".into()))).await.unwrap();
    assert_eq!(reply.text, "served by backup");
    let served = reply.served.unwrap();
    assert!(served.fell_back());
    assert_eq!(
        (served.requested_name.as_str(), served.name.as_str()),
        ("primary", "backup")
    );

    // With no fallback left, the error names the provider but not its URL or body.
    let lonely = ScriptedModel::start().await;
    lonely.push(Step::status(503));
    let toml = main_on(&lonely.url(), "");
    let h = harness(&toml).await;
    let err = h
        .turn("hi", Arc::new(NoApprover("none".into())))
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(err, "model provider 'primary' failed with HTTP 503");
    assert!(!err.contains("127.0.0.1") && !err.contains("sk-test-leak"));
}

#[tokio::test]
async fn retries_honour_retry_after_then_succeed() {
    let model = ScriptedModel::start().await;
    model.push(Step::rate_limited(0));
    model.push(Step::status(502));
    model.push(Step::text("third time lucky"));
    let toml = format!(
        "{}[agents.main]\nmodel_provider = \"primary\"\n",
        provider("primary", &model.url(), "max_retries = 2").replace("max_retries = 0\n", "")
    );
    let h = harness(&toml).await;
    let reply = h.turn("hi", Arc::new(NoApprover("none".into()))).await.unwrap();
    assert_eq!(reply.text, "third time lucky");
    assert_eq!(model.requests().len(), 3);
}

#[tokio::test]
async fn unreachable_model_server_gives_a_clear_error() {
    let toml = format!(
        "{}[agents.main]\nmodel_provider = \"primary\"\n",
        provider("primary", "http://127.0.0.1:9/v1", "")
    );
    let h = harness(&toml).await;
    let err = h
        .turn("hi", Arc::new(NoApprover("none".into())))
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "model provider 'primary' could not be reached (is the model server running? check [providers.primary].base_url)"
    );
}

#[tokio::test]
async fn malformed_arguments_unknown_tools_and_duplicates_are_reported_to_the_model() {
    let model = ScriptedModel::start().await;
    model.push(Step::tool_calls(&[
        ("file_read", "{not json"),
        ("teleport", "{}"),
        ("shell", r#"{"command": "echo hi"}"#),
        ("shell", r#"{"command": "echo hi"}"#),
        ("shell", r#"{"command": "rm -rf /"}"#),
        ("shell", r#"{"command": "ls | cat"}"#),
        ("file_read", r#"{"path": "../../etc/passwd"}"#),
    ]));
    model.push(Step::text("ok"));
    let h = harness(&format!("{}{PROFILE}", provider("primary", &model.url(), ""))).await;
    h.turn("go", Arc::new(NoApprover("none".into()))).await.unwrap();
    let r = tool_results(&model.requests()[1]);
    assert!(
        r[0].starts_with("Error: malformed JSON arguments for file_read"),
        "{}",
        r[0]
    );
    assert!(r[1].starts_with("Error: unknown tool 'teleport'"), "{}", r[1]);
    assert_eq!(r[2].trim(), "hi");
    assert!(r[3].starts_with("Error: skipped: an identical shell call"), "{}", r[3]);
    assert!(
        r[4].contains("high-risk commands are blocked for this agent") && !r[4].contains("risk_profiles"),
        "{}",
        r[4]
    );
    assert!(r[5].contains("pipes, redirects"), "{}", r[5]);
    assert!(r[6].contains("outside the agent workspace"), "{}", r[6]);
}

#[tokio::test]
async fn commands_outside_allowed_commands_name_the_key() {
    let model = ScriptedModel::start().await;
    model.push(Step::tool_call("shell", json!({"command": "touch x"})));
    model.push(Step::text("ok"));
    let h = harness(&format!("{}{PROFILE}", provider("primary", &model.url(), ""))).await;
    // touch is medium risk: supervised asks first; approve it so the policy check is what refuses.
    let broker = FixedBroker::approving("cli:me", false);
    h.turn("go", broker).await.unwrap();
    let r = tool_results(&model.requests()[1]);
    // The model is told it was refused and not to retry; the setting
    // that would allow it is for operators only (a model repeats it).
    assert_eq!(
        r[0],
        "Error: command 'touch' is not allowed for this agent. Do not run it again or try to get the same effect another way; tell the user it was refused."
    );
}

#[tokio::test]
async fn max_tool_iterations_ends_with_a_tool_free_call() {
    let model = ScriptedModel::start().await;
    for i in 0..2 {
        model.push(Step::tool_call("memory_recall", json!({"query": format!("q{i}")})));
    }
    model.push(Step::text("summary without tools"));
    let toml = format!(
        "{}{PROFILE}[runtime_profiles.default]\nmax_tool_iterations = 2\n",
        provider("primary", &model.url(), "")
    );
    let h = harness(&toml).await;
    let reply = h.turn("loop", Arc::new(NoApprover("none".into()))).await.unwrap();
    assert_eq!(reply.text, "summary without tools");
    let reqs = model.requests();
    assert_eq!(reqs.len(), 3);
    assert!(offered_tools(&reqs[2]).is_empty());
}

#[tokio::test]
async fn anthropic_provider_runs_the_same_loop() {
    let model = ScriptedModel::start().await;
    model.push(Step::tool_call(
        "memory_store",
        json!({"key": "lang", "content": "rust"}),
    ));
    model.push(Step::text("stored"));
    let toml = format!(
        "[providers.claude]\nkind = \"anthropic\"\nbase_url = \"{}\"\napi_key = \"test-key\"\nmodel = \"claude-x\"\n{PROFILE}",
        model.url()
    )
    .replace("model_provider = \"primary\"", "model_provider = \"claude\"");
    let h = harness(&toml).await;
    let reply = h
        .turn("remember rust", Arc::new(NoApprover("none".into())))
        .await
        .unwrap();
    assert_eq!(reply.text, "stored");
    let reqs = model.requests();
    assert_eq!(reqs[0]["system"][0]["text"], "You are terse.");
    assert_eq!(
        reqs[0]["system"][0]["cache_control"]["type"], "ephemeral",
        "the prefix is marked for the cache"
    );
    assert_eq!(reqs[1]["messages"][1]["content"][0]["type"], "tool_use");
    assert_eq!(reqs[1]["messages"][2]["content"][0]["type"], "tool_result");
    assert_eq!(
        h.runtime
            .store()
            .memory()
            .recall(&["main".into()], "lang", 5)
            .await
            .unwrap()[0]
            .content,
        "rust"
    );
}

#[tokio::test]
async fn model_switch_moves_the_session_to_another_provider() {
    let first = ScriptedModel::start().await;
    let second = ScriptedModel::start().await;
    first.push(Step::tool_call("model_switch", json!({"provider": "second"})));
    second.push(Step::text("now on the second provider"));
    second.push(Step::text("still here"));
    let toml = format!(
        "{}{}[agents.main]\nmodel_provider = \"first\"\n[risk_profiles.default]\nlevel = \"full\"\n",
        provider("first", &first.url(), ""),
        provider("second", &second.url(), "")
    );
    let h = harness(&toml).await;
    let reply = h
        .turn("switch please", Arc::new(NoApprover("none".into())))
        .await
        .unwrap();
    assert_eq!(reply.text, "now on the second provider");
    // The choice persists for the session's next turn.
    assert_eq!(
        h.turn("and now?", Arc::new(NoApprover("none".into())))
            .await
            .unwrap()
            .text,
        "still here"
    );
    assert_eq!(first.requests().len(), 1);
    assert_eq!(second.requests().len(), 2);
}

#[tokio::test]
async fn read_only_refuses_writes_and_the_daily_limit_stops_calls() {
    let model = ScriptedModel::start().await;
    model.push(Step::tool_call("file_write", json!({"path": "x", "content": "y"})).usage(1_000_000, 0));
    model.push(Step::text("refused"));
    let toml = format!(
        "{}[agents.main]\nmodel_provider = \"p\"\n[risk_profiles.default]\nlevel = \"read_only\"\n[cost]\nenabled = true\ndaily_limit_usd = 1.0\n[cost.prices.p]\ninput = 2.0\noutput = 0.0\n",
        provider("p", &model.url(), "")
    );
    let h = harness(&toml).await;
    // The first call costs $2 (1M input tokens at $2/M), over the $1 daily
    // limit, so the call that would follow the refused tool is not made.
    let err = h.turn("write", Arc::new(NoApprover("none".into()))).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "the daily cost limit of $1.00 is reached ([cost].daily_limit_usd); it resets at UTC midnight"
    );
    assert!(!h.workspace("main").join("x").exists());
    let history = h
        .runtime
        .store()
        .sessions()
        .history("agent:main:cli:local", 10)
        .await
        .unwrap();
    let tool_row = history.iter().find(|m| m.role == "tool").unwrap();
    assert!(
        tool_row.body.contains("file_write refused: this agent may only read"),
        "{}",
        tool_row.body
    );
}
