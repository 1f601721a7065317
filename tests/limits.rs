//! Chat input is bounded (`[limits]`): a conversation's queue, a person's
//! message rate, and how long an idle conversation stays in memory.

mod support;

use std::time::Duration;
use support::{Gateway, Sandbox};
use switchboard_test_support::{ScriptedModel, Step};

async fn setup(limits: &str) -> (ScriptedModel, Sandbox, Gateway) {
    support::team_gateway(&format!("[limits]\n{limits}\n"), "").await
}

fn texts(events: &[serde_json::Value], chat: &str) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["chat"] == chat)
        .map(|e| e["text"].as_str().unwrap_or("").to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_conversation_queue_answers_busy() {
    let (model, _sandbox, gw) = setup("session_queue = 2").await;
    model.push(
        Step::text("first answer")
            .when_last_contains("one")
            .delay(Duration::from_secs(2)),
    );
    model.push(Step::text("second answer").when_last_contains("two"));
    model.push(Step::text("third answer").when_last_contains("three"));
    // Four people in one group conversation: a person's own messages would
    // join their running turn instead of queueing behind it.
    for (who, text) in [("bob", "one"), ("carol", "two"), ("dave", "three"), ("erin", "four")] {
        gw.send("team", "room", &format!("cli:{who}"), text, true, false).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut cursor = 0;
    let busy = gw
        .wait_for("team", &mut cursor, 10, |e| {
            e["text"].as_str().unwrap_or("").starts_with("Busy")
        })
        .await;
    assert_eq!(
        busy["text"],
        "Busy: this conversation already has messages waiting. Try again when the current answer has arrived."
    );
    gw.wait_for("team", &mut cursor, 20, |e| e["text"] == "third answer")
        .await;
    let all = texts(&gw.events("team", 0).await, "room");
    assert_eq!(all.len(), 4, "{all:?}");
    assert_eq!(model.requests().len(), 3, "the fourth message never reached the model");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_over_the_rate_is_told_once_and_others_are_unaffected() {
    let (model, _sandbox, gw) = setup("messages_per_minute = 3").await;
    for _ in 0..4 {
        model.push(Step::text("ok"));
    }
    // Each of the first three is answered before the next is sent (sent at
    // once, they would be one merged turn); the rest come within the minute.
    let mut cursor = 0;
    for i in 0..6 {
        gw.send("team", "dm-carol", "cli:carol", &format!("message {i}"), false, true)
            .await;
        if i < 3 {
            gw.wait_for("team", &mut cursor, 10, |e| {
                e["chat"] == "dm-carol" && e["text"] == "ok"
            })
            .await;
        }
    }
    gw.send("team", "dm-dave", "cli:dave", "hello", false, true).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let events = gw.events("team", 0).await;
    let carol = texts(&events, "dm-carol");
    let told: Vec<&String> = carol
        .iter()
        .filter(|t| t.contains("more than 3 messages a minute"))
        .collect();
    assert_eq!(told.len(), 1, "{carol:?}");
    assert_eq!(carol.iter().filter(|t| *t == "ok").count(), 3, "{carol:?}");
    assert_eq!(texts(&events, "dm-dave"), ["ok"]);
    assert_eq!(model.requests().len(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_conversation_leaves_memory_and_comes_back_with_its_history() {
    let (model, _sandbox, gw) = setup("idle_session_secs = 1").await;
    model.push(Step::text("first").when_last_contains("remember 42"));
    model.push(Step::text("second").when_last_contains("what was it"));
    let mut cursor = 0;
    gw.send("team", "dm-erin", "cli:erin", "remember 42", false, true).await;
    gw.wait_for("team", &mut cursor, 10, |e| e["text"] == "first").await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert!(gw.log().contains("idle session left memory"), "{}", gw.log());
    gw.send("team", "dm-erin", "cli:erin", "what was it", false, true).await;
    gw.wait_for("team", &mut cursor, 10, |e| e["text"] == "second").await;
    let history = model.requests()[1]["messages"].to_string();
    assert!(
        history.contains("remember 42"),
        "the history came back from the store: {history}"
    );
}
