//! `/stop` in a group chat: a person stops their own turn, an approver
//! stops anyone's, and nobody else can stop another person's work.
//! Commands addressed to another bot are ignored.

mod support;

use std::time::Duration;
use support::{Gateway, Sandbox, free_port, main_agent_on};
use switchboard_test_support::{ScriptedModel, Step};

async fn setup() -> (ScriptedModel, Sandbox, Gateway) {
    let model = ScriptedModel::start().await;
    let port = free_port();
    let route = switchboard_test_support::config::ops_route("cli:alice");
    let config = format!(
        r#"{}[risk_profiles.default]
level = "supervised"
{route}[channels.local.team]
allowed_users = ["cli:bob", "cli:carol", "cli:alice"]
[channels.local.ops]
allowed_users = ["cli:alice"]
"#,
        main_agent_on(&model.url(), port, "local.team")
    );
    let sandbox = Sandbox::new(&config);
    let gw = Gateway::start(&sandbox, port, "team").await;
    (model, sandbox, gw)
}

fn text(e: &serde_json::Value) -> &str {
    e["text"].as_str().unwrap_or("")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_starter_or_an_approver_stops_a_turn_in_a_group() {
    let (model, _sandbox, gw) = setup().await;
    model.push(
        Step::text("Bob's long answer.")
            .when_last_contains("bob's job")
            .delay(Duration::from_secs(3)),
    );
    let mut cursor = 0;
    gw.send("team", "room", "cli:bob", "bob's job", true, false).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    gw.send("team", "room", "cli:carol", "/stop", false, false).await;
    let refusal = gw
        .wait_for("team", &mut cursor, 10, |e| {
            text(e).contains("only they or an approver")
        })
        .await;
    assert_eq!(
        text(&refusal),
        "The current turn was started by cli:bob; only they or an approver can stop it."
    );
    let answer = gw
        .wait_for("team", &mut cursor, 10, |e| text(e).starts_with("Bob's"))
        .await;
    assert_eq!(
        text(&answer),
        "Bob's long answer.",
        "carol's /stop did not stop bob's turn"
    );

    // An approver stops anyone's turn; the starter stops their own.
    for (stopper, job) in [("cli:alice", "second job"), ("cli:bob", "third job")] {
        model.push(
            Step::text("never")
                .when_last_contains(job)
                .delay(Duration::from_secs(30)),
        );
        gw.send("team", "room", "cli:bob", job, true, false).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        gw.send("team", "room", stopper, "/stop", false, false).await;
        let stopped = gw.wait_for("team", &mut cursor, 10, |e| text(e) == "(stopped)").await;
        assert_eq!(text(&stopped), "(stopped)", "{stopper}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_for_another_bot_is_ignored() {
    let (model, _sandbox, gw) = setup().await;
    model.push(Step::text("Hello."));
    gw.send("team", "room", "cli:bob", "/status@other_bot", false, true)
        .await;
    gw.send("team", "room", "cli:bob", "/help@other_bot", false, false)
        .await;
    gw.send("team", "room", "cli:bob", "hello", false, true).await;
    let mut cursor = 0;
    let first = gw.wait_for("team", &mut cursor, 10, |_| true).await;
    assert_eq!(text(&first), "Hello.", "nothing answered the other bot's commands");
    assert_eq!(model.requests().len(), 1);
}
