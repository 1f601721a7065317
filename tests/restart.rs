//! A restart keeps sessions, transcripts and memory: two `switchboard chat`
//! processes, one after the other, on the same SQLite file.

use serde_json::json;
use switchboard_e2e::{Sandbox, provider};
use switchboard_test_support::{ScriptedModel, Step};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_transcripts_and_memory_survive_a_restart() {
    let model = ScriptedModel::start().await;
    model.push(Step::tool_call(
        "memory_store",
        json!({"key": "oncall", "content": "alice this week"}),
    ));
    model.push(Step::text("Noted: alice is on call."));
    let config = format!(
        "{}[agents.main]\nmodel_provider = \"primary\"\n[risk_profiles.default]\nauto_approve = [\"memory_store\", \"memory_recall\"]\n",
        provider("primary", &model.url(), "")
    );
    let sandbox = Sandbox::new(&config);
    let mut first = sandbox.chat(&[]);
    first.send("remember alice is on call");
    first.expect("main> Noted: alice is on call.", 20);
    assert_eq!(first.finish().0, 0);

    // Second process: the old conversation is sent again, and memory answers.
    model.push(Step::tool_call("memory_recall", json!({"query": "oncall"})));
    model.push(Step::text("alice").when_last_contains("alice this week"));
    let mut second = sandbox.chat(&[]);
    second.send("who is on call?");
    second.expect("main> alice", 20);
    second.send("/new");
    second.expect("Started a fresh conversation.", 5);
    model.push(Step::text("fresh"));
    second.send("hello");
    second.expect("main> fresh", 20);
    second.finish();

    let reqs = model.requests();
    assert_eq!(reqs.len(), 5);
    let contents = |i: usize| -> Vec<String> {
        reqs[i]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["content"].as_str().unwrap_or("").to_string())
            .collect()
    };
    let resumed = contents(2);
    assert!(
        resumed.contains(&"remember alice is on call".to_string()),
        "{resumed:?}"
    );
    assert!(resumed.contains(&"Noted: alice is on call.".to_string()), "{resumed:?}");
    assert_eq!(resumed.last().unwrap(), "who is on call?");
    // After /new the old turns are no longer sent.
    let fresh = contents(4);
    assert_eq!(fresh, vec!["hello".to_string()], "{fresh:?}");
    assert!(sandbox.path().join("data/control_plane.db").exists());
}
