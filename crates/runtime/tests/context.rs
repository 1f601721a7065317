//! A long conversation keeps being answered by a model with a small
//! context: the history is fitted to the window (configured, asked from
//! llama.cpp's `/props`, or learned from a "context exceeded" answer), a
//! tool call never loses its result, and a conversation that cannot fit
//! says so in plain words.

mod common;

use common::*;
use serde_json::{Value, json};
use std::sync::Arc;
use switchboard_runtime::NoApprover;
use switchboard_test_support::tokens_of;
use switchboard_test_support::{ScriptedModel, Step};

const CONTEXT: u64 = 4096;

/// Every tool result in an OpenAI-shaped request follows the assistant
/// message that made its call.
fn calls_keep_their_results(req: &Value) -> bool {
    let messages = req["messages"].as_array().unwrap();
    messages.iter().enumerate().all(|(i, m)| {
        m["role"] != "tool"
            || messages[..i]
                .iter()
                .rev()
                .find(|p| p["role"] != "tool")
                .is_some_and(|p| {
                    p["tool_calls"]
                        .as_array()
                        .is_some_and(|calls| calls.iter().any(|c| c["id"] == m["tool_call_id"]))
                })
    })
}

/// Thirty questions, every third answered after a tool call, each answer
/// about 1.5 KB; every turn must be answered.
async fn chat(model: &ScriptedModel, h: &Harness) {
    for i in 0..30 {
        if i % 3 == 0 {
            model.push(Step::tool_call("memory_recall", json!({"query": format!("turn {i}")})));
        }
        model.push(Step::text(format!("Answer {i}: {}", "words ".repeat(250))));
        let reply = h
            .turn(
                &format!("Question {i}: tell me more."),
                Arc::new(NoApprover("none".into())),
            )
            .await
            .unwrap_or_else(|e| panic!("turn {i} failed: {e}"));
        assert!(
            reply.text.starts_with(&format!("Answer {i}:")),
            "turn {i}: {}",
            reply.text
        );
    }
}

async fn thirty_turns(llama_cpp: bool, window: &str) -> (ScriptedModel, Vec<u64>) {
    let model = ScriptedModel::start().await;
    model.with_context(CONTEXT, llama_cpp);
    let toml = format!(
        "{}[agents.main]\nmodel_provider = \"primary\"\ncompaction = false\n[risk_profiles.default]\nlevel = \"full\"\n",
        provider("primary", &model.url(), &format!("max_tokens = 512\n{window}"))
    );
    chat(&model, &harness(&toml).await).await;
    let sizes: Vec<u64> = model
        .requests()
        .iter()
        .map(|r| tokens_of(r.to_string().len()))
        .collect();
    (model, sizes)
}

fn check(model: &ScriptedModel, sizes: &[u64], what: &str) {
    let requests = model.requests();
    assert_eq!(requests.len(), 40, "{what}: 30 answers and 10 tool steps");
    for (i, r) in requests.iter().enumerate() {
        assert!(
            calls_keep_their_results(r),
            "{what}: request {i} split a call from its result"
        );
    }
    // Re-serialized JSON is within a few bytes of what was sent.
    let largest = sizes.iter().max().unwrap();
    assert!(
        *largest <= CONTEXT + 16,
        "{what}: a request of ~{largest} tokens was accepted"
    );
    eprintln!(
        "{what}: prompt sizes (tokens) first 8 {:?} ... last 4 {:?}; refused for length {}",
        &sizes[..8],
        &sizes[sizes.len() - 4..],
        model.overflows()
    );
}

#[tokio::test]
async fn a_thirty_turn_chat_fits_the_window_llama_cpp_reports() {
    let (model, sizes) = thirty_turns(true, "").await;
    check(&model, &sizes, "llama.cpp, window from /props");
    assert_eq!(model.overflows(), 0, "the window was known before the first request");
}

#[tokio::test]
async fn a_thirty_turn_chat_fits_a_configured_window() {
    let (model, sizes) = thirty_turns(false, "context_window = 4096\n").await;
    check(&model, &sizes, "configured window");
    assert_eq!(model.overflows(), 0, "never refused");
}

#[tokio::test]
async fn an_openai_overflow_without_a_size_is_retried_shorter() {
    let (model, sizes) = thirty_turns(false, "").await;
    check(&model, &sizes, "OpenAI shape, window guessed");
    assert!(model.overflows() <= 3, "{} refusals", model.overflows());
}

#[tokio::test]
async fn a_single_message_too_long_for_the_model_says_so() {
    let model = ScriptedModel::start().await;
    model.with_context(CONTEXT, true);
    let toml = format!(
        "{}[agents.main]\nmodel_provider = \"primary\"\ncompaction = false\n",
        provider("primary", &model.url(), "")
    );
    let h = harness(&toml).await;
    let huge = "x".repeat(40_000);
    let err = h.turn(&huge, Arc::new(NoApprover("none".into()))).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "this conversation is too long for the model of provider 'primary'; send /new to start afresh"
    );
}

/// The same on an Anthropic-shaped server, which says "prompt is too long"
/// without a size: the window is guessed from the refused request, and every
/// tool result still follows its call.
#[tokio::test]
async fn an_anthropic_overflow_is_recognised_and_retried_shorter() {
    let model = ScriptedModel::start().await;
    model.with_context(CONTEXT, false);
    let toml = format!(
        "[providers.claude]\nkind = \"anthropic\"\nbase_url = \"{}\"\nmodel = \"claude-x\"\nmax_retries = 0\nmax_tokens = 512\n[agents.main]\nmodel_provider = \"claude\"\ncompaction = false\n[risk_profiles.default]\nlevel = \"full\"\n",
        model.url()
    );
    chat(&model, &harness(&toml).await).await;
    assert!(
        model.overflows() >= 1 && model.overflows() <= 3,
        "{} refusals",
        model.overflows()
    );
    let mut results_seen = 0;
    for (i, r) in model.requests().iter().enumerate() {
        assert!(tokens_of(r.to_string().len()) <= CONTEXT + 16, "request {i}");
        // A tool_result block answers a tool_use of the message just before.
        let messages = r["messages"].as_array().unwrap();
        for (j, m) in messages.iter().enumerate() {
            for block in m["content"].as_array().into_iter().flatten() {
                if block["type"] == "tool_result" {
                    let used = messages[..j]
                        .last()
                        .and_then(|p| p["content"].as_array())
                        .is_some_and(|c| {
                            c.iter()
                                .any(|b| b["type"] == "tool_use" && b["id"] == block["tool_use_id"])
                        });
                    assert!(used, "request {i}: a tool result without its call");
                    results_seen += 1;
                }
            }
        }
    }
    assert!(results_seen >= 10, "tool results were checked ({results_seen})");
}
