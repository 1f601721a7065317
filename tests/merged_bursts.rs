//! Merged bursts on Telegram with the channel's defaults (a 1,500 ms
//! window): three quick messages from one person are one turn and one
//! model request (each message kept in the transcript), a message after the answer is a turn of its own, two
//! people writing at once get a turn each, and after a restart nothing of
//! a merged turn is answered again.

mod support;

use serde_json::Value;
use std::time::Duration;
use support::{Gateway, Sandbox, free_port, main_agent_on};
use switchboard_test_support::telegram::{BOT_USERNAME, FakeTelegram, private_chat, supergroup, user};
use switchboard_test_support::{ScriptedModel, Step};

const GROUP: i64 = -100_500;

fn config(model: &str, tg: &str, port: u16) -> String {
    format!(
        "{}[channels.telegram.main]\nbot_token = \"123:TEST\"\napi_url = \"{tg}\"\nallowed_users = [\"*\"]\nstreaming = \"off\"\n[channels.local.probe]\nallowed_users = []\n",
        main_agent_on(model, port, "telegram.main")
    )
}

/// The person messages of a model request, in order.
fn asked(r: &Value) -> Vec<String> {
    r["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quick_messages_from_one_person_are_one_turn_never_across_people() {
    let model = ScriptedModel::start().await;
    let tg = FakeTelegram::start().await;
    let port = free_port();
    let sandbox = Sandbox::new(&config(&model.url(), &tg.url(), port));
    let mut gw = Gateway::start(&sandbox, port, "probe").await;

    // Three messages 200 ms apart: one request with all three, in order.
    model.push(Step::text("One answer to all three."));
    let ann = || (private_chat(11, "Ann"), user(11, "Ann"));
    for text in ["I need a hand", "with the deploy script", "it fails on step 3"] {
        let (chat, from) = ann();
        tg.message(chat, from, text, None, None);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let sent = tg.wait_sent(1, 20).await;
    assert_eq!(sent[0]["text"], "One answer to all three.");
    assert_eq!(sent[0]["chat"]["id"], 11);
    tokio::time::sleep(Duration::from_millis(2000)).await;
    assert_eq!(model.requests().len(), 1, "one model request for the burst");
    assert_eq!(tg.sent_count(), 1, "one answer for the burst");
    let burst = &model.requests()[0];
    assert_eq!(
        asked(burst),
        ["I need a hand", "with the deploy script", "it fails on step 3"]
    );

    // After the answer, a new message is a turn of its own; the transcript
    // kept the three messages one by one.
    model.push(Step::text("Step 3 needs the token."));
    let (chat, from) = ann();
    tg.message(chat, from, "any idea?", None, None);
    let sent = tg.wait_sent(2, 20).await;
    assert_eq!(sent[1]["text"], "Step 3 needs the token.");
    let second = model.requests()[1].clone();
    assert_eq!(
        asked(&second),
        [
            "I need a hand",
            "with the deploy script",
            "it fails on step 3",
            "any idea?"
        ]
    );

    // Two people writing at once in a group: a turn each.
    model.push(Step::text("For Bob.").when_last_contains("from Bob"));
    model.push(Step::text("For Cat.").when_last_contains("from Cat"));
    for (id, name) in [(12, "Bob"), (13, "Cat")] {
        tg.message(
            supergroup(GROUP, "team"),
            user(id, name),
            &format!("@{BOT_USERNAME} a question from {name}"),
            None,
            None,
        );
    }
    let sent = tg.wait_sent(4, 20).await;
    let mut answers: Vec<&str> = sent[2..].iter().map(|m| m["text"].as_str().unwrap()).collect();
    answers.sort_unstable();
    assert_eq!(answers, ["For Bob.", "For Cat."]);
    assert_eq!(model.requests().len(), 4, "one request per person");

    // Every merged message was marked answered: a restart answers nothing again.
    // Killed after the answers' delivered marks are written, not in the
    // instant between an answer reaching the chat and its mark (the one
    // window of at-least-once delivery, docs/performance.md, which would
    // post that answer again from the outbox).
    tokio::time::sleep(Duration::from_millis(500)).await;
    gw.kill();
    let _gw = Gateway::start(&sandbox, port, "probe").await;
    tokio::time::sleep(Duration::from_millis(3000)).await;
    assert_eq!(tg.sent_count(), 4, "nothing answered twice after a restart");
    assert_eq!(model.requests().len(), 4);
}
