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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_hundred_messages_from_strangers_get_at_most_one_notice_each_and_no_outbox_row() {
    let (model, sandbox, gw) = setup().await;
    for round in 0..10 {
        for s in 0..50 {
            let who = format!("cli:stranger{s}");
            gw.send("team", &format!("dm-{s}"), &who, &format!("hello {round}"), false, true)
                .await;
        }
    }
    // Mentions in a group: no notice at all.
    for s in 0..20 {
        gw.send("team", "general", &format!("cli:stranger{s}"), "@bot hi", true, false)
            .await;
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let events = gw.events("team", 0).await;
    let told = bot_messages(&events);
    assert_eq!(told.len(), 20, "the minute's budget of notices: {told:#?}");
    let mut chats: Vec<&str> = told.iter().map(|e| e["chat"].as_str().unwrap()).collect();
    chats.sort_unstable();
    chats.dedup();
    assert_eq!(chats.len(), 20, "nobody was told twice, each in their own direct chat");
    assert!(!chats.contains(&"general"));
    assert!(model.requests().is_empty(), "no stranger reached the model");

    // With the channel failing, notices are tried once and never queued.
    gw.outage("team", true).await;
    for s in 50..60 {
        gw.send(
            "team",
            &format!("dm-{s}"),
            &format!("cli:stranger{s}"),
            "hello",
            false,
            true,
        )
        .await;
    }
    tokio::time::sleep(Duration::from_millis(800)).await;
    let (code, out, err) = sandbox.run(&["status", "--config", "switchboard.toml"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("outbox: 0 queued"), "{out}");
}
