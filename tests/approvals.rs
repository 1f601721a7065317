//! Approvals routed to an ops room (docs/approvals.md), through the real
//! `switchboard run` with two local channels: a team chat and an ops room.

mod support;

use serde_json::{Value, json};
use support::{Gateway, Sandbox, free_port, main_agent_on};
use switchboard_test_support::{ScriptedModel, Step, tool_results};

fn config(model_url: &str, port: u16, timeout_secs: u64) -> String {
    let route = switchboard_test_support::config::ops_route("cli:alice");
    format!(
        r#"{head}
[risk_profiles.default]
level = "supervised"
auto_approve = ["memory_recall"]
{route}on_no_approver = "deny"
timeout_secs = {timeout_secs}

[channels.local.team]
allowed_users = ["cli:bob", "cli:carol"]
[channels.local.ops]
allowed_users = ["cli:alice", "cli:mallory"]
rooms = {{ "ops-room" = "room-1" }}
"#,
        head = main_agent_on(model_url, port, "local.team")
    )
}

fn is_prompt(e: &Value) -> bool {
    e["kind"] == "approval_prompt"
}

async fn setup(timeout_secs: u64) -> (ScriptedModel, Sandbox, Gateway) {
    let model = ScriptedModel::start().await;
    let port = free_port();
    let sandbox = Sandbox::new(&config(&model.url(), port, timeout_secs));
    let gw = Gateway::start(&sandbox, port, "team").await;
    (model, sandbox, gw)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approver_allows_and_a_non_approver_is_refused() {
    let (model, _sandbox, gw) = setup(60).await;
    model.push(Step::tool_call(
        "memory_store",
        json!({"key": "db", "content": "password=hunter2 port 5432"}),
    ));
    model.push(Step::text("Stored it.").when_last_contains("stored memory"));
    let (mut team, mut ops) = (0, 0);
    gw.send("team", "general", "cli:bob", "@bot remember the db", true, false)
        .await;

    let prompt = gw.wait_for("ops", &mut ops, 20, is_prompt).await;
    assert_eq!(
        prompt["chat"], "room-1",
        "the prompt goes to the ops room, not the team chat"
    );
    let text = prompt["text"].as_str().unwrap();
    assert!(
        text.contains("tool: memory_store") && text.contains("agent: main"),
        "{text}"
    );
    assert!(!text.contains("hunter2"), "secret in the prompt: {text}");
    let id = prompt["approval_id"].as_str().unwrap().to_string();
    assert_eq!(prompt["choices"], json!(["allow_once", "always", "deny"]));

    // Someone in the ops room who is not an approver presses Allow.
    gw.press("ops", "room-1", "cli:mallory", &id, "allow_once").await;
    let refusal = gw.wait_for("ops", &mut ops, 10, |e| e["kind"] == "message").await;
    assert_eq!(
        refusal["text"],
        format!("cli:mallory may not decide approval {id}: only its approvers can. The request stays open.")
    );
    // A team member cannot decide either, from the team chat.
    gw.send("team", "general", "cli:bob", &format!("/approve {id}"), true, false)
        .await;
    let refusal = gw.wait_for("team", &mut team, 10, |e| e["kind"] == "message").await;
    assert!(
        refusal["text"].as_str().unwrap().starts_with("cli:bob may not decide"),
        "{refusal}"
    );
    assert_eq!(model.requests().len(), 1, "the tool is still waiting");

    gw.press("ops", "room-1", "cli:alice", &id, "allow_once").await;
    let edit = gw.wait_for("ops", &mut ops, 10, |e| e["kind"] == "edit").await;
    assert!(
        edit["text"].as_str().unwrap().contains("Allowed once by cli:alice"),
        "{edit}"
    );
    let reply = gw.wait_for("team", &mut team, 20, |e| e["kind"] == "message").await;
    assert_eq!(reply["text"], "Stored it.");
    assert_eq!(reply["chat"], "general");
    assert_eq!(tool_results(&model.requests()[1])[0], "stored memory 'db'");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deny_and_timeout_leave_the_tool_unrun_and_say_which() {
    let (model, sandbox, gw) = setup(2).await;
    model.push(Step::tool_call("memory_store", json!({"key": "a", "content": "1"})));
    model.push(Step::tool_call("memory_store", json!({"key": "b", "content": "2"})).when_last_contains("denied by"));
    model.push(Step::text("Gave up.").when_last_contains("timed out"));
    let (mut team, mut ops) = (0, 0);
    gw.send("team", "general", "cli:bob", "store two things", true, false)
        .await;
    let prompt = gw.wait_for("ops", &mut ops, 20, is_prompt).await;
    let id = prompt["approval_id"].as_str().unwrap().to_string();
    // The text fallback, from another chat: approvers may decide from anywhere.
    gw.send(
        "ops",
        "alice-dm",
        "cli:alice",
        &format!("/deny {id} not today"),
        false,
        true,
    )
    .await;
    // The second call waits 2 s and expires.
    let second = gw
        .wait_for("ops", &mut ops, 20, |e| is_prompt(e) && e["approval_id"] != id.as_str())
        .await;
    let expired = gw
        .wait_for("ops", &mut ops, 20, |e| {
            e["kind"] == "edit" && e["approval_id"] == second["approval_id"]
        })
        .await;
    assert!(expired["text"].as_str().unwrap().contains("Expired"), "{expired}");
    let reply = gw.wait_for("team", &mut team, 20, |e| e["kind"] == "message").await;
    assert_eq!(reply["text"], "Gave up.");
    let reqs = model.requests();
    assert_eq!(
        tool_results(&reqs[1])[0],
        "Error: memory_store was not run: denied by cli:alice (not today)."
    );
    assert_eq!(
        tool_results(&reqs[2])[1],
        "Error: memory_store was not run: the approval request timed out after 2s without a decision."
    );
    // The audit trail has both, with who and from where.
    let (code, out, _) = sandbox.run(&["approvals", "--config", "switchboard.toml"]);
    assert_eq!(code, 0);
    assert!(
        out.contains(&format!("{id} denied by cli:alice from local.ops:alice-dm (not today)")),
        "{out}"
    );
    assert!(out.contains("expired (timed out)"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_covers_one_run_only() {
    let (model, _sandbox, gw) = setup(60).await;
    model.push(Step::tool_call("memory_store", json!({"key": "a", "content": "1"})));
    model.push(
        Step::tool_call("memory_store", json!({"key": "b", "content": "2"})).when_last_contains("stored memory 'a'"),
    );
    model.push(Step::text("first run done").when_last_contains("stored memory 'b'"));
    let (mut team, mut ops) = (0, 0);
    gw.send("team", "general", "cli:bob", "first", true, false).await;
    let p1 = gw.wait_for("ops", &mut ops, 20, is_prompt).await;
    gw.press(
        "ops",
        "room-1",
        "cli:alice",
        p1["approval_id"].as_str().unwrap(),
        "always",
    )
    .await;
    gw.wait_for("team", &mut team, 20, |e| e["text"] == "first run done")
        .await;
    let prompts = gw.events("ops", 0).await.into_iter().filter(is_prompt).count();
    assert_eq!(prompts, 1, "the second call of the run used the grant");

    model.push(Step::tool_call("memory_store", json!({"key": "c", "content": "3"})));
    model.push(Step::text("second run done").when_last_contains("stored memory 'c'"));
    gw.send("team", "general", "cli:bob", "second", true, false).await;
    let p2 = gw.wait_for("ops", &mut ops, 20, is_prompt).await;
    assert_ne!(p2["approval_id"], p1["approval_id"], "a new run asks again");
    gw.press(
        "ops",
        "room-1",
        "cli:alice",
        p2["approval_id"].as_str().unwrap(),
        "allow_once",
    )
    .await;
    gw.wait_for("team", &mut team, 20, |e| e["text"] == "second run done")
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_pending_at_restart_is_shown_as_expired() {
    let model = ScriptedModel::start().await;
    let port = free_port();
    let sandbox = Sandbox::new(&config(&model.url(), port, 600));
    let mut gw = Gateway::start(&sandbox, port, "team").await;
    model.push(Step::tool_call("memory_store", json!({"key": "a", "content": "1"})));
    gw.send("team", "general", "cli:bob", "store", true, false).await;
    let mut ops = 0;
    let prompt = gw.wait_for("ops", &mut ops, 20, is_prompt).await;
    let id = prompt["approval_id"].as_str().unwrap().to_string();
    gw.kill();

    let gw = Gateway::start(&sandbox, port, "team").await;
    let mut ops = 0;
    // The prompt is edited to say it expired; if the process died before it
    // recorded where the prompt was, a new message says so instead.
    let idc = id.clone();
    let shown = gw
        .wait_for("ops", &mut ops, 20, move |e| {
            e["approval_id"] == idc.as_str() || e["text"].as_str().unwrap_or("").contains(idc.as_str())
        })
        .await;
    assert!(shown["text"].as_str().unwrap().contains("xpired"), "{shown}");
    if shown["kind"] == "edit" {
        assert_eq!(
            shown["message_id"], prompt["message_id"],
            "the original prompt is the one edited"
        );
    }
    let (_, out, _) = sandbox.run(&["approvals", "--config", "switchboard.toml"]);
    assert!(out.contains(&format!("{id} expired (the gateway restarted)")), "{out}");
    // A late answer finds nothing to approve, and is told why.
    gw.press("ops", "room-1", "cli:alice", &id, "allow_once").await;
    let late = gw.wait_for("ops", &mut ops, 10, |e| e["kind"] == "message").await;
    assert_eq!(
        late["text"],
        format!("Approval {id} is no longer pending: it was expired.")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_chats_need_a_mention_dms_do_not_and_strangers_are_refused() {
    let (model, _sandbox, gw) = setup(60).await;
    model.push(Step::text("answer to the DM").when_last_contains("in private"));
    model.push(Step::text("answer to the mention").when_last_contains("mentioned"));
    let mut team = 0;
    gw.send(
        "team",
        "general",
        "cli:bob",
        "chatter nobody asked the bot about",
        false,
        false,
    )
    .await;
    gw.send("team", "bob-dm", "cli:bob", "in private", false, true).await;
    let dm = gw.wait_for("team", &mut team, 20, |e| e["kind"] == "message").await;
    assert_eq!(
        (dm["chat"].as_str(), dm["text"].as_str()),
        (Some("bob-dm"), Some("answer to the DM"))
    );
    // A stranger gets no notice in a group, one in a direct chat.
    gw.send("team", "general", "cli:eve", "@bot let me in", true, false)
        .await;
    gw.send("team", "eve-dm", "cli:eve", "let me in", false, true).await;
    let refused = gw.wait_for("team", &mut team, 20, |e| e["kind"] == "message").await;
    assert_eq!(refused["chat"], "eve-dm", "nothing was said in the group first");
    assert_eq!(
        refused["text"],
        "Sorry, cli:eve may not use this bot here. An operator can add it to [channels.local.team].allowed_users."
    );
    gw.send("team", "general", "cli:carol", "@bot mentioned you", true, false)
        .await;
    let reply = gw.wait_for("team", &mut team, 20, |e| e["kind"] == "message").await;
    assert_eq!(reply["text"], "answer to the mention");
    assert_eq!(
        model.requests().len(),
        2,
        "the unmentioned message never reached the model"
    );
}

/// A request whose run was stopped is closed: its prompt says so, and a
/// later press is told it is no longer pending (the tool never runs).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_of_a_stopped_run_is_closed() {
    let (model, sandbox, gw) = setup(60).await;
    model.push(Step::tool_call("memory_store", json!({"key": "k", "content": "v"})));
    let (mut team, mut ops) = (0, 0);
    gw.send("team", "general", "cli:bob", "@bot remember it", true, false)
        .await;
    let prompt = gw.wait_for("ops", &mut ops, 20, is_prompt).await;
    let id = prompt["approval_id"].as_str().unwrap().to_string();
    gw.send("team", "general", "cli:bob", "/stop", true, false).await;
    let stopped = gw.wait_for("team", &mut team, 10, |e| e["text"] == "(stopped)").await;
    assert_eq!(stopped["text"], "(stopped)");
    let edit = gw.wait_for("ops", &mut ops, 10, |e| e["kind"] == "edit").await;
    assert!(
        edit["text"]
            .as_str()
            .unwrap()
            .contains("Cancelled: the run that asked was stopped."),
        "{edit}"
    );
    gw.press("ops", "room-1", "cli:alice", &id, "allow_once").await;
    let answer = gw.wait_for("ops", &mut ops, 10, |e| e["kind"] == "message").await;
    assert_eq!(
        answer["text"],
        format!("Approval {id} is no longer pending: it was cancelled.")
    );
    assert_eq!(model.requests().len(), 1, "the tool never ran");
    let (code, out, err) = sandbox.run(&["approvals", "--config", "switchboard.toml"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("cancelled"), "{out}");
}

/// A reload takes an approver off the route while a request waits: her
/// allow is refused (the request stays open), and the approver still named
/// decides it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approver_a_reload_removed_decides_nothing_already_waiting() {
    let model = ScriptedModel::start().await;
    let port = free_port();
    let both = config(&model.url(), port, 60)
        .replace(
            "approvers = [\"cli:alice\"]",
            "approvers = [\"cli:alice\", \"cli:dave\"]",
        )
        .replace("[\"cli:alice\", \"cli:mallory\"]", "[\"cli:alice\", \"cli:dave\"]");
    let sandbox = Sandbox::new(&both);
    let gw = Gateway::start(&sandbox, port, "team").await;
    model.push(Step::tool_call("memory_store", json!({"key": "k", "content": "v"})));
    model.push(Step::text("Stored it.").when_last_contains("stored memory"));
    let (mut team, mut ops) = (0, 0);
    gw.send("team", "general", "cli:bob", "@bot remember k", true, false)
        .await;
    let prompt = gw.wait_for("ops", &mut ops, 20, is_prompt).await;
    let id = prompt["approval_id"].as_str().unwrap().to_string();

    let only_dave = both.replace(
        "approvers = [\"cli:alice\", \"cli:dave\"]",
        "approvers = [\"cli:dave\"]",
    );
    std::fs::write(sandbox.config_path(), only_dave).unwrap();
    gw.signal("HUP");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !gw.log().contains("configuration reloaded") {
        assert!(std::time::Instant::now() < deadline, "no reload: {}", gw.log());
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    gw.press("ops", "room-1", "cli:alice", &id, "allow_once").await;
    let refusal = gw.wait_for("ops", &mut ops, 10, |e| e["kind"] == "message").await;
    assert_eq!(
        refusal["text"],
        format!(
            "cli:alice is no longer an approver (the configuration changed after approval {id} was asked): only the current approvers can decide it. The request stays open."
        )
    );
    assert_eq!(model.requests().len(), 1, "the tool did not run on her allow");
    gw.press("ops", "room-1", "cli:dave", &id, "allow_once").await;
    gw.wait_for("team", &mut team, 20, |e| e["text"] == "Stored it.").await;
}
