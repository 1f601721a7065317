//! Strangers cost the gateway next to nothing: a flood of messages from
//! people not on the allow list gets at most one notice per sender an
//! hour, in direct chats only, at most 20 a minute for all of them
//! together, sent once and never queued in the outbox, and none of it
//! reaches the model.

mod support;

use serde_json::Value;
use std::time::Duration;
use support::{Gateway, Sandbox};
use switchboard_test_support::ScriptedModel;

async fn setup() -> (ScriptedModel, Sandbox, Gateway) {
    let model = ScriptedModel::start().await;
    let port = support::free_port();
    let config = format!(
        "{}[channels.local.team]\nallowed_users = [\"cli:ann\"]\n",
        support::main_agent_on(&model.url(), port, "local.team")
    );
    let sandbox = Sandbox::new(&config);
    let gw = Gateway::start(&sandbox, port, "team").await;
    (model, sandbox, gw)
}

fn bot_messages(events: &[Value]) -> Vec<&Value> {
    events.iter().filter(|e| e["kind"] == "message").collect()
}

/// Sorted, distinct chats the bot wrote in.
fn chats_told(events: &[Value]) -> Vec<String> {
    let mut chats: Vec<String> = bot_messages(events)
        .iter()
        .map(|e| e["chat"].as_str().unwrap().to_string())
        .collect();
    chats.sort_unstable();
    chats.dedup();
    chats
}

async fn dm(gw: &Gateway, s: usize, text: &str) {
    let who = format!("cli:stranger{s}");
    gw.send("team", &format!("dm-{s}"), &who, text, false, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_hundred_messages_from_strangers_get_at_most_one_notice_each_and_no_outbox_row() {
    let (model, sandbox, gw) = setup().await;
    // With the channel failing, notices are tried once and never queued:
    // once it is back, none of them arrives.
    gw.outage("team", true).await;
    for s in 100..105 {
        dm(&gw, s, "hello while down").await;
    }
    tokio::time::sleep(Duration::from_millis(800)).await;
    let tried = gw.log().matches("a notice was not delivered").count();
    assert_eq!(tried, 5, "each was tried once");
    gw.outage("team", false).await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(chats_told(&gw.events("team", 0).await).is_empty());
    let (code, out, err) = sandbox.run(&["status", "--config", "switchboard.toml"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("outbox: 0 queued"), "{out}");

    // Ten strangers write three times each: one notice each.
    for round in 0..3 {
        for s in 0..10 {
            dm(&gw, s, &format!("hello {round}")).await;
        }
    }
    tokio::time::sleep(Duration::from_millis(800)).await;
    let events = gw.events("team", 0).await;
    assert_eq!(bot_messages(&events).len(), 10, "one notice per stranger");
    assert_eq!(chats_told(&events).len(), 10);

    // 450 more from fifty others, and mentions in a group: the minute's
    // budget (20 notices, 15 of them used) lets five more through.
    for round in 0..9 {
        for s in 10..60 {
            dm(&gw, s, &format!("hello {round}")).await;
        }
    }
    for s in 0..20 {
        gw.send("team", "general", &format!("cli:stranger{s}"), "@bot hi", true, false)
            .await;
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let events = gw.events("team", 0).await;
    let told = bot_messages(&events);
    assert_eq!(told.len(), 15, "the minute's budget of notices: {told:#?}");
    let chats = chats_told(&events);
    assert_eq!(chats.len(), 15, "nobody was told twice, each in their own direct chat");
    assert!(!chats.iter().any(|c| c == "general"));
    assert!(model.requests().is_empty(), "no stranger reached the model");
    let (code, out, err) = sandbox.run(&["status", "--config", "switchboard.toml"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("outbox: 0 queued"), "{out}");
}
