//! Streamed answers over real HTTP against the scripted model: text reaches
//! a listener as it is written, in order and exactly once, on both APIs;
//! tool calls whose arguments arrive in pieces run whole; nobody listening
//! means no stream is asked for.

mod common;

use common::*;
use serde_json::json;
use std::time::Duration;
use switchboard_runtime::{NoApprover, TurnError, TurnEvent, TurnReply};
use switchboard_test_support::{ScriptedModel, Step};
use tokio_util::sync::CancellationToken;

const PROFILE: &str = r#"
[risk_profiles.default]
level = "supervised"
auto_approve = ["memory_store", "memory_recall"]
"#;

/// A turn with a listener: its result and every event it sent.
async fn listened(h: &Harness, text: &str) -> (Result<TurnReply, TurnError>, Vec<TurnEvent>) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let broker = std::sync::Arc::new(NoApprover("no operator in this test".into()));
    let result = h.turn_told(text, broker, CancellationToken::new(), Some(tx)).await;
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    (result, events)
}

/// The text streamed after the last reset, and how many pieces it came in.
fn streamed(events: &[TurnEvent]) -> (String, usize) {
    let start = events
        .iter()
        .rposition(|e| *e == TurnEvent::TextReset)
        .map_or(0, |i| i + 1);
    let pieces: Vec<&str> = events[start..]
        .iter()
        .filter_map(|e| match e {
            TurnEvent::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    (pieces.concat(), pieces.len())
}

async fn streams_text_and_runs_tools(config: String, model: &ScriptedModel) {
    model.push(Step::tool_call(
        "memory_store",
        json!({"key": "lang", "content": "rust, since 2015"}),
    ));
    model.push(Step::text("Noted: the project is written in Rust, since 2015.").streamed(Duration::from_millis(5)));
    let h = harness(&config).await;
    let (result, events) = listened(&h, "remember the language").await;
    let reply = result.unwrap();
    assert_eq!(reply.text, "Noted: the project is written in Rust, since 2015.");
    let (text, pieces) = streamed(&events);
    assert_eq!(text, reply.text, "the streamed text is the answer, once");
    assert!(pieces >= 8, "word by word, not in one piece: {pieces}");
    let reqs = model.requests();
    assert_eq!(reqs.len(), 2);
    assert!(reqs.iter().all(|r| r["stream"] == json!(true)), "both calls streamed");
    // The tool call's arguments came in two halves and ran whole.
    let stored = h.runtime.store().memory().recall(&["main".into()], "lang", 5).await;
    assert_eq!(stored.unwrap()[0].content, "rust, since 2015");
    assert!(reply.usage.output_tokens > 0, "usage is read from the stream");
}

#[tokio::test]
async fn openai_compatible_answers_stream_word_by_word_and_tools_run_whole() {
    let model = ScriptedModel::start().await;
    let config = main_on(&model.url(), PROFILE);
    streams_text_and_runs_tools(config, &model).await;
    assert_eq!(model.requests()[0]["stream_options"], json!({"include_usage": true}));
}

#[tokio::test]
async fn anthropic_answers_stream_word_by_word_and_tools_run_whole() {
    let model = ScriptedModel::start().await;
    let config = format!(
        "[providers.claude]\nkind = \"anthropic\"\nbase_url = \"{}\"\napi_key = \"test-key\"\nmodel = \"claude-x\"\n[agents.main]\nmodel_provider = \"claude\"\n{PROFILE}",
        model.url()
    );
    streams_text_and_runs_tools(config, &model).await;
}

#[tokio::test]
async fn a_provider_that_fails_before_streaming_falls_back_with_one_answer() {
    let (bad, good) = (ScriptedModel::start().await, ScriptedModel::start().await);
    bad.push(Step::status(500));
    good.push(Step::text("served by the fallback"));
    let h = harness(&with_fallback(&bad.url(), &good.url(), PROFILE)).await;
    let (result, events) = listened(&h, "hello").await;
    assert_eq!(result.unwrap().text, "served by the fallback");
    assert_eq!(streamed(&events).0, "served by the fallback");
}

#[tokio::test]
async fn nobody_listening_means_no_stream_is_asked_for() {
    let model = ScriptedModel::start().await;
    model.push(Step::text("plain answer"));
    let h = harness(&main_on(&model.url(), PROFILE)).await;
    let reply = h
        .turn("hello", std::sync::Arc::new(NoApprover("none".into())))
        .await
        .unwrap();
    assert_eq!(reply.text, "plain answer");
    assert_eq!(model.requests()[0]["stream"], json!(false));
}
