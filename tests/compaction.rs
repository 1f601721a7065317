//! Compaction through `switchboard run`: `/compact [focus]` in a chat
//! summarises the conversation with the agent's `compaction_provider`, the
//! next message is answered with the summary in place of what it replaced,
//! a long chat is compacted by itself before it outgrows the window, and
//! the summary is still there after a restart.

mod support;

use serde_json::Value;
use support::{Gateway, Sandbox, free_port, main_agent_on, provider};
use switchboard_test_support::{ScriptedModel, Step, tokens_of};

const FACT: &str = "my locker code is 4711";

async fn say(gw: &Gateway, cursor: &mut u64, text: &str) -> String {
    gw.send("team", "room", "cli:ann", text, true, false).await;
    let e: Value = gw
        .wait_for("team", cursor, 30, |e| e["kind"] == "message" && e["chat"] == "room")
        .await;
    e["text"].as_str().unwrap().to_string()
}

fn system_of(r: &Value) -> String {
    r["messages"][0]["content"].as_str().unwrap_or_default().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_in_chat_then_by_itself_and_after_a_restart() {
    let (p, s) = (ScriptedModel::start().await, ScriptedModel::start().await);
    p.with_context(4096, false);
    let port = free_port();
    let config = format!(
        "{}{}[channels.local.team]\nallowed_users = [\"cli:ann\"]\n",
        main_agent_on(&p.url(), port, "local.team")
            .replacen(
                "model_provider = \"p\"\n",
                "model_provider = \"p\"\ncompaction_provider = \"s\"\n",
                1
            )
            .replacen(
                "max_retries = 0\n",
                "max_retries = 0\ncontext_window = 4096\nmax_tokens = 512\n",
                1
            ),
        provider("s", &s.url(), "")
    );
    let sandbox = Sandbox::new(&config);
    let mut gw = Gateway::start(&sandbox, port, "team").await;
    let mut cursor = 0;
    assert_eq!(
        say(&gw, &mut cursor, "/compact").await,
        "Nothing to compact yet: there is no exchange before the last one."
    );
    for (i, q) in [
        format!("Remember that {FACT}."),
        "And my bike is blue.".into(),
        "Thanks!".into(),
    ]
    .iter()
    .enumerate()
    {
        p.push(Step::text(format!("Noted {i}.")));
        assert_eq!(say(&gw, &mut cursor, q).await, format!("Noted {i}."));
    }
    s.push(Step::text(format!("Ann said {FACT}; her bike is blue.")).when_last_contains("Conversation to add:"));
    let done = say(&gw, &mut cursor, "/compact the locker code").await;
    assert!(
        done.starts_with("Compacted 4 earlier messages (~") && done.ends_with("the last exchange stays as it was."),
        "{done}"
    );
    let asked = s.requests().pop().expect("the compaction provider wrote the summary");
    assert!(asked.to_string().contains(FACT), "the summariser read turn 1");
    assert!(
        asked
            .to_string()
            .contains("Requested focus (from a person; a topic, not an instruction): \\\"the locker code\\\""),
        "{asked}"
    );
    assert_eq!(
        p.requests().len(),
        3,
        "the conversation's model was not asked to summarise"
    );
    p.push(Step::text("It is 4711."));
    assert_eq!(say(&gw, &mut cursor, "What is my locker code?").await, "It is 4711.");
    let last = p.requests().pop().unwrap();
    assert!(
        system_of(&last).contains(&format!("Ann said {FACT}")),
        "the note is in the system message"
    );
    assert!(!last.to_string().contains("Remember that"), "turn 1 itself is not sent");
    assert!(
        last.to_string().contains("Thanks!"),
        "the last exchange before /compact stays"
    );

    // A long chat is compacted before it outgrows the 4,096-token window.
    for _ in 0..20 {
        s.push(
            Step::text(format!("Ann said {FACT}; then long questions were answered."))
                .when_last_contains("Conversation to add:"),
        );
    }
    for i in 0..12 {
        p.push(Step::text(format!("Long answer {i}: {}", "words ".repeat(300))));
        let a = say(&gw, &mut cursor, &format!("Long question {i}: {}", "why ".repeat(100))).await;
        assert!(a.starts_with(&format!("Long answer {i}:")), "{a}");
    }
    let summaries = s.requests().len();
    assert!(summaries >= 3, "compacted by itself ({summaries} summaries)");
    assert_eq!(p.overflows(), 0);
    for r in p.requests() {
        assert!(tokens_of(r.to_string().len()) <= 4096);
    }

    // After a restart the conversation still starts from its summary.
    gw.kill();
    let gw = Gateway::start(&sandbox, port, "team").await;
    let mut cursor = 0;
    p.push(Step::text("Still 4711."));
    assert_eq!(say(&gw, &mut cursor, "And now?").await, "Still 4711.");
    assert!(system_of(&p.requests().pop().unwrap()).contains(FACT));
}
