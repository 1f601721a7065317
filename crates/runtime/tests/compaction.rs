//! A long conversation on a model with a 4,096-token context keeps what
//! matters: when its history no longer fits, the oldest part is summarised
//! into a note that stands in its place, a fact from the first turn is
//! still before the model at turn 30, and no request is refused.

mod common;

use common::*;
use serde_json::{Value, json};
use std::sync::Arc;
use switchboard_runtime::NoApprover;
use switchboard_test_support::tokens_of;
use switchboard_test_support::{ScriptedModel, Step};

const CONTEXT: u64 = 4096;
const FACT: &str = "my locker code is 4711";
const SESSION: &str = "agent:main:cli:local";

fn is_summary_request(r: &Value) -> bool {
    r.to_string().contains("Conversation to add:")
}

fn system_of(r: &Value) -> String {
    r["messages"][0]["content"].as_str().unwrap_or_default().to_string()
}

fn summary_step() -> Step {
    Step::text(format!(
        "The person said {FACT}. They asked a series of questions; each was answered at length."
    ))
    .when_last_contains("Conversation to add:")
}

async fn setup(extra: &str) -> (ScriptedModel, Harness) {
    let model = ScriptedModel::start().await;
    model.with_context(CONTEXT, true);
    let toml = format!(
        "{}[agents.main]\nmodel_provider = \"primary\"\n{extra}[risk_profiles.default]\nlevel = \"full\"\n",
        provider("primary", &model.url(), "max_tokens = 512\n")
    );
    (model, harness(&toml).await)
}

async fn ask(h: &Harness, text: &str) -> String {
    h.turn(text, Arc::new(NoApprover("none".into())))
        .await
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .text
}

#[tokio::test]
async fn a_fact_from_turn_one_is_still_known_at_turn_thirty() {
    let (model, h) = setup("").await;
    // Summaries are matched first; answers go to every other request.
    for _ in 0..30 {
        model.push(summary_step());
    }
    for i in 0..30 {
        if i % 3 == 1 {
            model.push(Step::tool_call("memory_recall", json!({"query": format!("turn {i}")})));
        }
        model.push(Step::text(format!("Answer {i}: {}", "words ".repeat(250))));
        let text = if i == 0 {
            format!("Question 0: remember that {FACT}.")
        } else if i == 29 {
            "Question 29: what is my locker code?".to_string()
        } else {
            format!("Question {i}: tell me more.")
        };
        let answer = ask(&h, &text).await;
        assert!(answer.starts_with(&format!("Answer {i}:")), "turn {i}: {answer}");
    }
    let requests = model.requests();
    let summaries: Vec<&Value> = requests.iter().filter(|r| is_summary_request(r)).collect();
    let turns: Vec<&Value> = requests.iter().filter(|r| !is_summary_request(r)).collect();
    assert_eq!(turns.len(), 40, "30 answers and 10 tool steps");
    assert!(!summaries.is_empty(), "the conversation was compacted");
    assert_eq!(model.overflows(), 0, "no request was refused for its length");
    for (i, r) in requests.iter().enumerate() {
        let tokens = tokens_of(r.to_string().len());
        assert!(tokens <= CONTEXT, "request {i} has ~{tokens} tokens");
    }
    // The summariser was given the fact, then every later summary kept it.
    let first = summaries[0].to_string();
    assert!(first.contains(FACT), "the first summary request carried turn 1");
    for s in &summaries[1..] {
        assert!(
            s.to_string()
                .contains(&format!("Earlier summary:\\nThe person said {FACT}"))
        );
    }
    // A summary is asked for at most a fifth of the window.
    for s in &summaries {
        let cap = s["max_tokens"].as_u64().expect("a summary request caps its answer");
        assert!(cap <= CONTEXT / 5, "cap {cap}");
    }
    // At turn 30 the fact is before the model only through the summary.
    let last = turns.last().unwrap();
    assert!(system_of(last).contains(FACT), "the summary is in the system message");
    assert!(
        !last.to_string().contains("Question 0:"),
        "turn 1 itself was compacted away"
    );
    assert!(last.to_string().contains("what is my locker code?"));
    // The transcript keeps every message and the summary note.
    let all = h.runtime.store().sessions().turn_messages(SESSION, "").await.unwrap();
    assert!(all.is_empty(), "messages of no turn are not turn messages");
    let history = h.runtime.store().sessions().history(SESSION, 1000).await.unwrap();
    assert_eq!(history[0].role, "summary", "the history starts with the note");
    assert!(history[0].body.contains(FACT));
    eprintln!(
        "compaction: {} summaries over 30 turns; last turn's prompt ~{} tokens; history now {} messages",
        summaries.len(),
        tokens_of(last.to_string().len()),
        history.len()
    );
}

#[tokio::test]
async fn compact_on_demand_keeps_the_last_exchange_and_takes_a_focus() {
    let (model, h) = setup("").await;
    assert_eq!(
        h.runtime.compact("main", SESSION, None).await.unwrap(),
        None,
        "nothing to compact yet"
    );
    for i in 0..4 {
        model.push(Step::text(format!("Answer {i}")));
        ask(&h, &format!("Question {i}: {FACT}? no, item {i}")).await;
    }
    model.push(
        Step::text("Summary: items 0 to 2 were discussed.")
            .when(|r| r.to_string().contains("Requested focus") && r.to_string().contains("the items")),
    );
    let done = h
        .runtime
        .compact("main", SESSION, Some("the items"))
        .await
        .unwrap()
        .expect("three exchanges to compact");
    assert_eq!(done.replaced, 6, "three questions and their answers");
    assert!(done.tokens_after < done.tokens_before);
    model.push(Step::text("Answer 4"));
    ask(&h, "Question 4").await;
    let last = model.requests().last().unwrap().clone();
    assert!(system_of(&last).contains("Summary: items 0 to 2 were discussed."));
    let texts: Vec<&str> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert!(
        texts.iter().any(|t| t.contains("item 3")),
        "the last exchange stays whole"
    );
    assert!(
        !texts.iter().any(|t| t.contains("item 0")),
        "older ones are in the summary only"
    );
}

#[tokio::test]
async fn compaction_can_be_turned_off_and_a_failed_summary_cuts_instead() {
    let (model, h) = setup("compaction = false\n").await;
    for i in 0..12 {
        model.push(Step::text(format!("Answer {i}: {}", "words ".repeat(250))));
        ask(&h, &format!("Question {i}")).await;
    }
    assert!(!model.requests().iter().any(is_summary_request), "no summary when off");
    // On: the summariser fails (HTTP 500), the turn is answered anyway.
    let (model, h) = setup("").await;
    for _ in 0..30 {
        model.push(Step::status(500).when_last_contains("Conversation to add:"));
    }
    for i in 0..12 {
        model.push(Step::text(format!("Answer {i}: {}", "words ".repeat(250))));
        let answer = ask(&h, &format!("Question {i}")).await;
        assert!(answer.starts_with(&format!("Answer {i}:")));
    }
    assert!(model.requests().iter().any(is_summary_request), "a summary was tried");
    let history = h.runtime.store().sessions().history(SESSION, 1000).await.unwrap();
    assert!(
        history.iter().all(|m| m.role != "summary"),
        "no note from a failed summary"
    );
}
