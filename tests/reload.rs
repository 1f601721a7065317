//! A configuration applied to a running gateway (`switchboard reload`,
//! which sends SIGHUP): while people keep writing on Telegram, a new
//! approver and a newly allowed person are added and the Telegram bot is
//! handed from one agent to another. The next approval takes the new
//! approver's press, the new person is answered, the connection is never
//! dropped, nothing written meanwhile is lost or answered twice, and a
//! broken file changes nothing.

mod support;

use serde_json::{Value, json};
use std::time::{Duration, Instant};
use support::{Gateway, Sandbox, free_port, ops_room_approvals, provider};
use switchboard_test_support::telegram::{FakeTelegram, private_chat, user};
use switchboard_test_support::{ScriptedModel, Step};

const OPS: i64 = -100_300;

/// `main` on model `p` and `second` on model `q`; `telegram_agent` answers
/// on Telegram, the other on the local probe.
fn config(p: &str, q: &str, tg: &str, _port: u16, allowed: &str, approvers: &str, telegram_agent: &str) -> String {
    let other = if telegram_agent == "main" { "second" } else { "main" };
    format!(
        r#"{}{}[web]
[agents.{telegram_agent}]
model_provider = "{}"
channels = ["telegram.main"]
[agents.{other}]
model_provider = "{}"
channels = ["local.probe"]
[channels.telegram.main]
bot_token = "123:TEST"
api_url = "{tg}"
allowed_users = [{allowed}]
streaming = "off"
rooms = {{ "ops" = "{OPS}" }}
[channels.local.probe]
allowed_users = []
{}"#,
        provider("p", p, ""),
        provider("q", q, ""),
        if telegram_agent == "main" { "p" } else { "q" },
        if telegram_agent == "main" { "q" } else { "p" },
        ops_room_approvals("telegram.main", "tg:7")
            .replace("approvers = [\"tg:7\"]", &format!("approvers = [{approvers}]")),
    )
}

fn text(m: &Value) -> String {
    m["text"].as_str().unwrap_or("").to_string()
}

/// What the bot sent to `chat` so far.
fn sent_to(tg: &FakeTelegram, chat: i64) -> Vec<String> {
    tg.sent().iter().filter(|m| m["chat"]["id"] == chat).map(text).collect()
}

async fn wait_until(what: &str, secs: u64, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !done() {
        assert!(Instant::now() < deadline, "waited {secs} s for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// `switchboard reload` for `sandbox`, then the log line that says how it went.
async fn reload(sandbox: &Sandbox, gw: &Gateway, outcome: &str, seen_before: usize) {
    let (code, out, err) = sandbox.run(&["reload", "--config", "switchboard.toml"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("asked gateway pid"), "{out}");
    wait_until(outcome, 20, || gw.log().matches(outcome).count() > seen_before).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_applies_people_approvers_and_routes_without_dropping_anything() {
    let (p, q) = (ScriptedModel::start().await, ScriptedModel::start().await);
    p.echo_after(Duration::from_millis(5));
    q.echo_after(Duration::from_millis(5));
    let tg = FakeTelegram::start().await;
    let port = free_port();
    let before = config(&p.url(), &q.url(), &tg.url(), port, "\"tg:11\"", "\"tg:7\"", "main");
    let after = config(
        &p.url(),
        &q.url(),
        &tg.url(),
        port,
        "\"tg:11\", \"tg:12\", \"tg:8\"",
        "\"tg:7\", \"tg:8\"",
        "second",
    );
    let sandbox = Sandbox::new(&before);
    let gw = Gateway::start(&sandbox, port, "probe").await;

    // Before: Ann is answered by main; Cid is a stranger.
    tg.message(private_chat(11, "Ann"), user(11, "Ann"), "first", None, None);
    wait_until("main's answer", 20, || sent_to(&tg, 11).len() == 1).await;
    assert_eq!(p.served(), 1);
    tg.message(private_chat(12, "Cid"), user(12, "Cid"), "let me in", None, None);
    wait_until("the stranger's refusal", 20, || !sent_to(&tg, 12).is_empty()).await;
    let refused = sent_to(&tg, 12).len();
    assert_eq!(p.served() + q.served(), 1, "a stranger never reaches a model");
    let polls_before = tg.get_updates_calls();

    // Ann keeps writing while the file changes and the gateway reloads.
    let writer = std::sync::Arc::new(tg);
    let tg = writer.clone();
    let burst = tokio::spawn(async move {
        for i in 0..20 {
            writer.message(
                private_chat(11, "Ann"),
                user(11, "Ann"),
                &format!("burst {i}"),
                None,
                None,
            );
            tokio::time::sleep(Duration::from_millis(40)).await;
        }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    std::fs::write(sandbox.config_path(), &after).unwrap();
    reload(&sandbox, &gw, "configuration reloaded", 0).await;
    burst.await.unwrap();
    wait_until("every burst answered", 30, || sent_to(&tg, 11).len() == 21).await;
    let answers = sent_to(&tg, 11);
    for i in 0..20 {
        let n = answers.iter().filter(|a| **a == format!("echo: burst {i}")).count();
        assert_eq!(n, 1, "burst {i} answered {n} times: {answers:?}");
    }
    assert!(q.served() > 0, "the bot is second's after the reload");
    let log = gw.log();
    assert_eq!(
        log.matches("this instance runs the channel now").count(),
        1,
        "the Telegram channel was never restarted: {log}"
    );
    assert!(tg.get_updates_calls() > polls_before, "polling went on");

    // The newly allowed person is answered (by second).
    let served = q.served();
    tg.message(private_chat(12, "Cid"), user(12, "Cid"), "hello now", None, None);
    wait_until("Cid's answer", 20, || sent_to(&tg, 12).len() == refused + 1).await;
    assert!(sent_to(&tg, 12).last().unwrap().contains("hello now"));
    assert_eq!(q.served(), served + 1);

    // The next approval takes the new approver's press.
    q.push(Step::tool_call("memory_store", json!({"key": "k", "content": "v"})));
    q.push(Step::text("Stored.").when_last_contains("stored memory"));
    tg.message(private_chat(11, "Ann"), user(11, "Ann"), "remember it", None, None);
    wait_until("the prompt in the ops room", 20, || !sent_to(&tg, OPS).is_empty()).await;
    let prompt = tg.sent().into_iter().find(|m| m["chat"]["id"] == OPS).unwrap();
    let once = prompt["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
        .as_str()
        .unwrap()
        .to_string();
    tg.press(user(8, "Dee"), prompt.clone(), &once);
    let deadline = Instant::now() + Duration::from_secs(20);
    while !sent_to(&tg, 11).iter().any(|t| t == "Stored.") {
        assert!(
            Instant::now() < deadline,
            "the new approver's press did not run the tool; sent {:?}, answers to presses {:?}, log:\n{}",
            tg.sent().iter().map(text).collect::<Vec<_>>(),
            tg.calls("answercallbackquery"),
            gw.log()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // Each instance's configuration is told apart by its digest.
    let (_, status, _) = sandbox.run(&["status", "--config", "switchboard.toml"]);
    assert!(status.contains(", configuration "), "{status}");
    assert!(!status.contains("configuration unknown"), "{status}");

    // A broken file changes nothing: `reload` says what is wrong without
    // asking the gateway, and a SIGHUP is refused with the reason logged;
    // Cid is still allowed and second still answers.
    std::fs::write(sandbox.config_path(), "[agents.main\nbroken").unwrap();
    let (code, out, err) = sandbox.run(&["reload", "--config", "switchboard.toml"]);
    assert_ne!(code, 0, "{out}");
    assert!(err.contains("switchboard.toml"), "{err}");
    gw.signal("HUP");
    wait_until("the refusal in the log", 20, || {
        gw.log().contains("configuration reload refused; nothing changed")
    })
    .await;
    let served = q.served();
    tg.message(private_chat(12, "Cid"), user(12, "Cid"), "still here", None, None);
    wait_until("Cid's second answer", 20, || sent_to(&tg, 12).len() == refused + 2).await;
    assert_eq!(q.served(), served + 1);
}
