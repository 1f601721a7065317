//! Pairing and the two-person rule decided by reactions on a real Synapse:
//! ✅ on a pairing request lets the person in; on a request that needs two
//! approvers, the first ✅ leaves it waiting ("1 of 2", reactions still
//! taken) and a second person's ✅ runs the tool.

mod matrix_fx;
mod support;

use matrix_fx::{BOT, OP, World, world};
use serde_json::{Value, json};
use support::{Gateway, Sandbox, free_port};
use switchboard_test_support::synapse::body;
use switchboard_test_support::{ScriptedModel, Step};

async fn start(model: &ScriptedModel, w: &World, tweak: impl Fn(String) -> String) -> (Gateway, Sandbox) {
    let port = free_port();
    let config = tweak(matrix_fx::config(&model.url(), w, port));
    let sandbox = Sandbox::new(&config);
    let gw = Gateway::start(&sandbox, port, "probe").await;
    (gw, sandbox)
}

/// The bot's latest edit (`m.replace`) of event `of` in the ops room that
/// satisfies `pred`.
async fn edit_of(w: &World, of: &str, pred: impl Fn(&str) -> bool) -> String {
    let edit =
        w.op.wait_for(&w.ops, BOT, 30, |m: &Value| {
            m["content"]["m.relates_to"]["rel_type"] == "m.replace"
                && m["content"]["m.relates_to"]["event_id"] == of
                && m["content"]["m.new_content"]["body"].as_str().is_some_and(&pred)
        })
        .await;
    edit["content"]["m.new_content"]["body"].as_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pairing_request_is_allowed_by_reaction() {
    let model = ScriptedModel::start().await;
    let w = world().await;
    let _gw = start(&model, &w, |c| {
        c.replacen(
            "allowed_users = [\"*\"]",
            &format!("allowed_users = [\"paired\", \"{OP}\"]"),
            1,
        )
    })
    .await;
    w.ann.say(&w.dm, "hello, may I?").await;
    let told = w.ann.wait_for(&w.dm, BOT, 30, |m| body(m).contains("code: ")).await;
    let at = body(&told).find("code: ").unwrap() + 6;
    let code = body(&told)[at..at + 8].to_string();
    let request =
        w.op.wait_for(&w.ops, BOT, 30, |m| body(m).starts_with("Pairing request"))
            .await;
    assert!(
        body(&request).contains("@ann:localhost") && body(&request).contains(&code),
        "{}",
        body(&request)
    );
    assert!(
        body(&request).ends_with("Or react: ✅ allow · ❌ deny."),
        "{}",
        body(&request)
    );
    let id = request["event_id"].as_str().unwrap().to_string();
    w.op.react(&w.ops, &id, "✅").await;
    w.ann
        .wait_for(&w.dm, BOT, 30, |m| {
            body(m) == "An operator let you in: you can talk to me now."
        })
        .await;
    let edited = edit_of(&w, &id, |b| b.contains("Allowed once by @op:localhost")).await;
    assert!(edited.starts_with("Pairing request"), "{edited}");
    model.push(Step::text("Hello Ann, welcome."));
    w.ann.say(&w.dm, "thanks").await;
    w.ann
        .wait_for(&w.dm, BOT, 30, |m| body(m) == "Hello Ann, welcome.")
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_approvers_react_before_the_tool_runs() {
    let model = ScriptedModel::start().await;
    let w = world().await;
    let _gw = start(&model, &w, |c| {
        c.replacen(
            &format!("approvers = [\"{OP}\"]\n"),
            &format!("approvers = [\"{OP}\", \"@bob:localhost\"]\napprovals_required = 2\n"),
            1,
        )
    })
    .await;
    model.push(Step::tool_call("memory_store", json!({"key": "k", "content": "v"})));
    model.push(Step::text("Stored.").when_last_contains("stored memory"));
    w.ann.say(&w.dm, "remember it").await;
    let prompt =
        w.op.wait_for(&w.ops, BOT, 30, |m| body(m).starts_with("Approval needed"))
            .await;
    assert!(
        body(&prompt).contains("needs 2 different approvers"),
        "{}",
        body(&prompt)
    );
    let id = prompt["event_id"].as_str().unwrap().to_string();
    w.op.react(&w.ops, &id, "✅").await;
    edit_of(&w, &id, |b| b.contains("1 of 2 approvals (by @op:localhost)")).await;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert_eq!(model.requests().len(), 1, "the tool waits for a second person");
    // The reactions are still read: a second person's ✅ runs it.
    w.bob.react(&w.ops, &id, "✅").await;
    w.ann.wait_for(&w.dm, BOT, 30, |m| body(m) == "Stored.").await;
    edit_of(&w, &id, |b| {
        b.contains("Allowed once by @op:localhost and @bob:localhost")
    })
    .await;
}
