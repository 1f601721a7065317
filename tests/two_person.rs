//! The two-person rule (`approvals_required = 2`) through `switchboard run`:
//! one allow leaves the tool waiting and the prompt says "1 of 2"; the same
//! person again — or through another of their ids — does not count; a
//! second person runs it; a deny by anyone ends it; and on a cluster the
//! two allows may be given on different instances, the tool running once.

mod cluster_fx;
mod support;

use serde_json::{Value, json};
use std::time::Duration;
use support::{Gateway, Sandbox, free_port, main_agent_on};
use switchboard_test_support::telegram::{FakeTelegram, private_chat, user};
use switchboard_test_support::{ScriptedModel, Step};

const OPS: i64 = -100_300;

/// tg:7 and cli:seven are one person; tg:8 is another.
fn config(model: &str, tg: &str, port: u16) -> String {
    format!(
        r#"{}[risk_profiles.default]
level = "supervised"
[risk_profiles.default.approval_route]
approver_channel = "telegram.main"
approver_recipient = "ops"
approvers = ["tg:7", "cli:seven", "tg:8"]
approvals_required = 2
timeout_secs = 60
[people.seven]
ids = ["tg:7", "cli:seven"]
[channels.telegram.main]
bot_token = "123:TEST"
api_url = "{tg}"
allowed_users = ["*"]
streaming = "off"
rooms = {{ "ops" = "{OPS}" }}
[channels.local.probe]
allowed_users = ["cli:seven"]
"#,
        main_agent_on(model, port, "telegram.main").replacen(
            "[web]\n",
            &format!("[web]\nlisten = \"127.0.0.1:{port}\"\nconsole = true\n"),
            1
        ),
    )
}

fn text(m: &Value) -> &str {
    m["text"].as_str().unwrap_or("")
}

/// Ann asks for something that needs an approval; returns the prompt.
/// `answer`: what the model says once the tool ran (none: it never runs).
async fn ask(model: &ScriptedModel, tg: &FakeTelegram, key: &str, answer: Option<&str>) -> Value {
    model.push(Step::tool_call("memory_store", json!({"key": key, "content": "v"})).when_last_contains(key));
    if let Some(answer) = answer {
        model.push(Step::text(answer).when_last_contains("stored memory"));
    }
    let before = tg.sent().len();
    tg.message(
        private_chat(11, "Ann"),
        user(11, "Ann"),
        &format!("remember {key}"),
        None,
        None,
    );
    let sent = tg.wait_sent(before + 1, 20).await;
    let prompt = sent[before].clone();
    assert_eq!(prompt["chat"]["id"], OPS);
    prompt
}

fn allow_button(prompt: &Value) -> String {
    prompt["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The `n`th (1-based) callback answer's text.
async fn nth_answer(tg: &FakeTelegram, n: usize) -> String {
    let answers = tg.wait_calls("answercallbackquery", n, 20).await;
    text(&answers[n - 1]).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_different_people_must_allow_and_one_deny_ends_it() {
    let model = ScriptedModel::start().await;
    let tg = FakeTelegram::start().await;
    let port = free_port();
    let sandbox = Sandbox::new(&config(&model.url(), &tg.url(), port));
    let gw = Gateway::start(&sandbox, port, "probe").await;

    let prompt = ask(&model, &tg, "first", Some("Stored first.")).await;
    assert!(
        text(&prompt).contains("needs 2 different approvers"),
        "{}",
        text(&prompt)
    );
    let id = approval_id(&prompt);
    let allow = allow_button(&prompt);
    tg.press(user(7, "Seven"), prompt.clone(), &allow);
    assert_eq!(
        nth_answer(&tg, 1).await,
        format!("Approval {id}: 1 of 2 approvals; it runs when another approver allows it.")
    );
    let edits = tg.wait_calls("editmessagetext", 1, 20).await;
    assert!(
        text(&edits[0]).contains("1 of 2 approvals (by tg:7)"),
        "{}",
        text(&edits[0])
    );
    assert!(
        edits[0]["reply_markup"]["inline_keyboard"][0].is_array(),
        "the buttons stay: {}",
        edits[0]
    );
    // The same person again, by button and through their other id.
    tg.press(user(7, "Seven"), prompt.clone(), &allow);
    assert!(nth_answer(&tg, 2).await.contains("already: a person counts once"));
    gw.send("probe", "ops-here", "cli:seven", &format!("/approve {id}"), true, false)
        .await;
    let mut cursor = 0;
    let said = gw.wait_for("probe", &mut cursor, 20, |e| e["kind"] == "message").await;
    assert_eq!(
        said["text"],
        format!(
            "cli:seven (person:seven) has allowed approval {id} already: a person counts once. It needs another approver."
        )
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(model.requests().len(), 1, "the tool still waits");

    // A second person: it runs, and both are named.
    tg.press(user(8, "Eight"), prompt.clone(), &allow);
    let sent = tg.wait_sent(2, 20).await;
    assert_eq!(text(&sent[1]), "Stored first.");
    assert_eq!(nth_answer(&tg, 3).await, format!("Approval {id}: allowed once."));
    // The partial edit may be made twice (the press and the prompt's
    // stored message id race, and each side shows what it saw); the
    // final one names both.
    let last = edit_saying(&tg, "Allowed once by tg:7 and tg:8").await;
    assert!(
        last["reply_markup"]["inline_keyboard"]
            .as_array()
            .is_none_or(Vec::is_empty),
        "{last}"
    );
    let db = sqlx::SqlitePool::connect(&format!(
        "sqlite://{}",
        sandbox.path().join("data/control_plane.db").display()
    ))
    .await
    .unwrap();
    let (by, allows): (String, i64) = sqlx::query_as("SELECT decided_by, allows FROM approvals WHERE id = $1")
        .bind(&id)
        .fetch_one(&db)
        .await
        .unwrap();
    assert_eq!((by.as_str(), allows), ("tg:7 and tg:8", 2), "the audit names both");

    // One allow, then a deny by the other: denied, the tool never runs.
    let prompt = ask(&model, &tg, "second", None).await;
    model.push(Step::text("Not stored, then.").when_last_contains("denied"));
    let deny = prompt["reply_markup"]["inline_keyboard"][0][2]["callback_data"]
        .as_str()
        .unwrap()
        .to_string();
    tg.press(user(7, "Seven"), prompt.clone(), &allow_button(&prompt));
    assert!(nth_answer(&tg, 4).await.contains("1 of 2 approvals"));
    tg.press(user(8, "Eight"), prompt.clone(), &deny);
    assert!(nth_answer(&tg, 5).await.ends_with(": denied."));
    tokio::time::sleep(Duration::from_millis(800)).await;
    let sent = tg.wait_sent(4, 20).await;
    assert_eq!(text(&sent[3]), "Not stored, then.", "the model was told it was denied");
    assert!(
        model
            .requests()
            .iter()
            .all(|r| !r.to_string().contains("stored memory 'second'"))
    );

    // One allow by button, the second from the console; while the tool
    // waits, the run tree shows the turn and the route that took it.
    let prompt = ask(&model, &tg, "third", Some("Stored third.")).await;
    let id = approval_id(&prompt);
    tg.press(user(7, "Seven"), prompt.clone(), &allow_button(&prompt));
    assert!(nth_answer(&tg, 6).await.contains("1 of 2 approvals"));
    let base = format!("http://127.0.0.1:{port}");
    let before = tg.sent().len();
    tg.message(private_chat(8, "Eight"), user(8, "Eight"), "/console", None, None);
    let link = text(&tg.wait_sent(before + 1, 20).await[before])
        .lines()
        .last()
        .unwrap()
        .to_string();
    let cookie = support::session_from_link(&base, &link).await;
    let http = reqwest::Client::new();
    let runs = http
        .get(format!("{base}/console"))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(runs.contains("via agents.main.channels"), "{runs}");
    let csrf_at = runs.find("name=\"csrf-token\" content=\"").unwrap() + 27;
    let csrf = runs[csrf_at..].split('"').next().unwrap().to_string();
    let decided = http
        .post(format!("{base}/console/approvals/{id}/decide"))
        .header("cookie", &cookie)
        .header("x-csrf-token", &csrf)
        .body("once")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(decided, format!("Approval {id}: allowed once."));
    let sent = tg.wait_sent(before + 2, 20).await;
    assert!(sent.iter().any(|m| text(m) == "Stored third."), "{sent:?}");
}

/// Wait for an `editMessageText` call whose text contains `words`.
async fn edit_saying(tg: &FakeTelegram, words: &str) -> Value {
    for _ in 0..1000 {
        if let Some(edit) = tg
            .calls("editmessagetext")
            .into_iter()
            .find(|e| text(e).contains(words))
        {
            return edit;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("no edit said {words:?}: {:#?}", tg.calls("editmessagetext"));
}

/// The request id a prompt names (`Approval needed [<id>]`).
fn approval_id(prompt: &Value) -> String {
    text(prompt)
        .split('[')
        .nth(1)
        .unwrap()
        .split(']')
        .next()
        .unwrap()
        .to_string()
}

/// Two allows on two instances of a cluster: the tool runs once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_cluster_two_allows_on_two_instances_run_the_tool_once() {
    let tweak = |c: String| {
        c.replace(
            "approvers = [\"cli:alice\"]\n",
            "approvers = [\"cli:alice\", \"cli:bob\"]\napprovals_required = 2\n",
        )
        .replace(
            "[channels.local.ops]\nallowed_users = [\"cli:alice\"]",
            "[channels.local.ops]\nallowed_users = [\"cli:alice\", \"cli:bob\"]",
        )
    };
    let Some(c) = cluster_fx::cluster_tweaked("twoperson", [&[], &[], &[]], tweak).await else {
        return;
    };
    let a = cluster_fx::owner(&c, None, 20).await;
    let b = (a + 1) % 3;
    c.model
        .push(Step::tool_call("memory_store", json!({"key": "k", "content": "v"})).when_last_contains("remember it"));
    c.model.push(Step::text("Stored.").when_last_contains("stored memory"));
    c.tg.message(private_chat(11, "Ann"), user(11, "Ann"), "remember it", None, None);
    let (mut at_a, mut at_b) = (0, 0);
    let prompt = c.nodes[a]
        .gw
        .wait_for("ops", &mut at_a, 20, |e| e["kind"] == "approval_prompt")
        .await;
    let id = prompt["approval_id"].as_str().unwrap().to_string();
    assert!(text(&prompt).contains("needs 2 different approvers"));
    c.nodes[a]
        .gw
        .send("ops", "ops-room", "cli:alice", &format!("/approve {id}"), true, false)
        .await;
    let first = c.nodes[a]
        .gw
        .wait_for("ops", &mut at_a, 20, |e| e["kind"] == "message")
        .await;
    assert!(text(&first).contains("1 of 2 approvals"), "{first}");
    c.nodes[b]
        .gw
        .send("ops", "ops-room", "cli:bob", &format!("/approve {id}"), true, false)
        .await;
    let second = c.nodes[b]
        .gw
        .wait_for("ops", &mut at_b, 20, |e| e["kind"] == "message")
        .await;
    assert_eq!(second["text"], format!("Approval {id}: allowed once."));
    c.tg.wait_sent(1, 20).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let stored = cluster_fx::texts(&c.tg).iter().filter(|t| *t == "Stored.").count();
    assert_eq!(stored, 1, "the tool ran once and was answered once");
    let tool_results = c
        .model
        .requests()
        .iter()
        .filter(|r| r.to_string().contains("stored memory"))
        .count();
    assert_eq!(tool_results, 1, "the model saw one tool result");
}
