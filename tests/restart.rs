//! A restart keeps sessions, transcripts and memory: two `switchboard chat`
//! processes, one after the other, on the same SQLite file.

mod support;

use serde_json::json;
use support::{Sandbox, provider};
use switchboard_test_support::{ScriptedModel, Step};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_transcripts_and_memory_survive_a_restart() {
    let model = ScriptedModel::start().await;
    model.push(Step::tool_call(
        "memory_store",
        json!({"key": "oncall", "content": "alice this week"}),
    ));
    model.push(Step::text("Noted: alice is on call."));
    let config = format!(
        "{}[agents.main]\nmodel_provider = \"primary\"\n[risk_profiles.default]\nauto_approve = [\"memory_store\", \"memory_recall\"]\n",
        provider("primary", &model.url(), "")
    );
    let sandbox = Sandbox::new(&config);
    let mut first = sandbox.chat(&[]);
    first.send("remember alice is on call");
    first.expect("main> Noted: alice is on call.", 20);
    assert_eq!(first.finish().0, 0);

    // Second process: the old conversation is sent again, and memory answers.
    model.push(Step::tool_call("memory_recall", json!({"query": "oncall"})));
    model.push(Step::text("alice").when_last_contains("alice this week"));
    let mut second = sandbox.chat(&[]);
    second.send("who is on call?");
    second.expect("main> alice", 20);
    second.send("/new");
    second.expect("Started a fresh conversation.", 5);
    model.push(Step::text("fresh"));
    second.send("hello");
    second.expect("main> fresh", 20);
    second.finish();

    let reqs = model.requests();
    assert_eq!(reqs.len(), 5);
    let contents = |i: usize| -> Vec<String> {
        reqs[i]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["content"].as_str().unwrap_or("").to_string())
            .collect()
    };
    let resumed = contents(2);
    assert!(
        resumed.contains(&"remember alice is on call".to_string()),
        "{resumed:?}"
    );
    assert!(resumed.contains(&"Noted: alice is on call.".to_string()), "{resumed:?}");
    assert_eq!(resumed.last().unwrap(), "who is on call?");
    // After /new the old turns are no longer sent.
    let fresh = contents(4);
    assert_eq!(fresh, vec!["hello".to_string()], "{fresh:?}");
    assert!(sandbox.path().join("data/control_plane.db").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_task_left_running_is_reported_lost_after_a_restart() {
    let main = ScriptedModel::start().await;
    let reviewer = ScriptedModel::start().await;
    let config = format!(
        "{}{}[agents.main]\nmodel_provider = \"pmain\"\n[agents.reviewer]\nmodel_provider = \"prev\"\n[risk_profiles.default]\nlevel = \"full\"\ndelegation_policy = {{ mode = \"allow\" }}\n",
        provider("pmain", &main.url(), ""),
        provider("prev", &reviewer.url(), "")
    );
    let sandbox = Sandbox::new(&config);
    main.push(Step::tool_call(
        "delegate",
        json!({"agent": "reviewer", "prompt": "slow audit", "background": true}),
    ));
    reviewer.push(Step::text("never delivered").delay(std::time::Duration::from_secs(120)));
    main.push(Step::text("Started the audit."));
    let mut first = sandbox.chat(&[]);
    first.send("audit in the background");
    first.expect("main> Started the audit.", 20);
    let started = main.requests()[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    let task_id = started
        .lines()
        .nth(1)
        .unwrap()
        .strip_prefix("task_id: ")
        .unwrap()
        .to_string();
    // The gateway dies with the task still running.
    drop(first);

    let mut second = sandbox.chat(&[]);
    main.push(Step::tool_call(
        "delegate",
        json!({"action": "check_result", "task_id": task_id}),
    ));
    main.push(Step::text("checked"));
    second.send("how is the audit?");
    second.expect("main> checked", 20);
    second.finish();
    let reqs = main.requests();
    let result = reqs.last().unwrap()["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    let view: serde_json::Value = serde_json::from_str(&result).unwrap();
    assert_eq!(view["task_id"], task_id.as_str());
    assert_eq!(view["status"], "lost", "{view}");
    assert_eq!(view["error"], "the gateway stopped while this run was active");
}

/// One SQLite file serves one gateway: a second `switchboard run` on it is
/// refused with a pointer to PostgreSQL; `switchboard chat` beside it is fine.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_run_on_one_sqlite_file_is_refused() {
    let model = ScriptedModel::start().await;
    let port = support::free_port();
    let sandbox = Sandbox::new(&format!(
        "{}[web]\n[agents.main]\nmodel_provider = \"primary\"\nchannels = [\"local.team\"]\n[channels.local.team]\nallowed_users = [\"*\"]\n",
        provider("primary", &model.url(), "")
    ));
    let _first = support::Gateway::start(&sandbox, port, "team").await;
    let config = sandbox.config_path();
    let (code, _, err) = sandbox.run(&["run", "--config", config.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(
        err.contains("uses this SQLite database") && err.contains("PostgreSQL"),
        "{err}"
    );
    model.push(Step::text("chat works"));
    let mut chat = sandbox.chat(&[]);
    chat.send("hello");
    chat.expect("main> chat works", 20);
    assert_eq!(chat.finish().0, 0);
}

/// A stop (SIGTERM, as a service manager or a rolling upgrade sends) lets
/// the turn under way finish and answer before the process exits; new
/// messages are no longer taken meanwhile (they wait on the platform for
/// the next instance).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_lets_the_turn_under_way_finish() {
    use switchboard_test_support::telegram::{FakeTelegram, private_chat, user};
    let model = ScriptedModel::start().await;
    let tg = FakeTelegram::start().await;
    model.push(Step::text("finished before stopping").delay(std::time::Duration::from_secs(2)));
    let port = support::free_port();
    let sandbox = Sandbox::new(&support::telegram_dm_config(&model.url(), &tg.url(), port));
    let gw = support::Gateway::start(&sandbox, port, "probe").await;
    tg.message(private_chat(21, "Ann"), user(21, "Ann"), "a slow question", None, None);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while model.requests().is_empty() {
        assert!(std::time::Instant::now() < deadline, "the model was never asked");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    gw.terminate().await;
    let sent = tg.sent();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0]["text"], "finished before stopping");
    let log = gw.log();
    assert!(log.contains("the turns under way finished"), "{log}");
    // Written after the stop began: left on the platform, not taken.
    tg.message(private_chat(22, "Bob"), user(22, "Bob"), "too late", None, None);
    let store = switchboard_store::Store::open(&format!("sqlite://{}/data/control_plane.db", sandbox.path().display()))
        .await
        .unwrap();
    let (pending, done) = store.inbox().counts().await.unwrap();
    assert_eq!(
        (pending, done),
        (0, 1),
        "the answered message is done; nothing else was taken"
    );
    store.close().await;
}
