//! `/model [name]` through `switchboard run`: the conversation's model and
//! the ones its agent may use, a refusal naming them, a switch that the
//! next message and `/status` follow, another chat untouched, and the
//! choice kept across a restart.

mod support;

use serde_json::Value;
use support::{Gateway, Sandbox, free_port, main_agent_on, provider};
use switchboard_test_support::{ScriptedModel, Step};

async fn say(gw: &Gateway, cursor: &mut u64, chat: &str, text: &str) -> String {
    gw.send("team", chat, "cli:ann", text, true, false).await;
    let e: Value = gw
        .wait_for("team", cursor, 20, |e| e["kind"] == "message" && e["chat"] == chat)
        .await;
    e["text"].as_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_switches_among_its_agents_models_and_keeps_the_choice() {
    let (p, q) = (ScriptedModel::start().await, ScriptedModel::start().await);
    let port = free_port();
    let config = format!(
        "{}{}[channels.local.team]\nallowed_users = [\"cli:ann\"]\n",
        main_agent_on(&p.url(), port, "local.team").replacen(
            "model_provider = \"p\"\n",
            "model_provider = \"p\"\nmodels = [\"q\"]\n",
            1
        ),
        provider("q", &q.url(), "")
    );
    let sandbox = Sandbox::new(&config);
    let mut gw = Gateway::start(&sandbox, port, "team").await;
    let mut cursor = 0;
    assert_eq!(
        say(&gw, &mut cursor, "room", "/model").await,
        "This conversation uses p (p-model).\nAvailable: p (p-model), q (q-model). Switch with /model <name>."
    );
    assert_eq!(
        say(&gw, &mut cursor, "room", "/model gpt-9").await,
        "'gpt-9' is not a model main may use here. Available: p (p-model), q (q-model)."
    );
    assert_eq!(
        say(&gw, &mut cursor, "room", "/model q").await,
        "This conversation now uses q (q-model) from the next message."
    );
    q.push(Step::text("From q."));
    assert_eq!(say(&gw, &mut cursor, "room", "hello").await, "From q.");
    let status = say(&gw, &mut cursor, "room", "/status").await;
    assert!(status.contains("model: q (q-model)"), "{status}");
    // Another chat keeps the agent's own model.
    p.push(Step::text("From p."));
    assert_eq!(say(&gw, &mut cursor, "other", "hello").await, "From p.");
    assert_eq!((p.requests().len(), q.requests().len()), (1, 1));

    // After a restart the conversation still uses q.
    gw.kill();
    let gw = Gateway::start(&sandbox, port, "team").await;
    let mut cursor = 0;
    q.push(Step::text("Still q."));
    assert_eq!(say(&gw, &mut cursor, "room", "again").await, "Still q.");
    assert_eq!((p.requests().len(), q.requests().len()), (1, 2));
}
