//! Child-session transcripts: archived after `archive_after_minutes`,
//! computed from stored times, and a child's run timeout.

mod common;
mod sessions_fx;

use common::*;
use serde_json::json;
use sessions_fx::*;
use std::time::Duration;
use switchboard_test_support::Step;

#[tokio::test]
async fn run_timeout_agents_md_and_archiving_after_the_delay() {
    let f = fx("").await;
    std::fs::write(f.h.workspace("worker").join("AGENTS.md"), "Always answer in French.").unwrap();
    f.main.push(Step::tool_calls(&[
        (
            "sessions_spawn",
            r#"{"task": "slow job", "agentId": "worker", "runTimeoutSeconds": 1}"#,
        ),
        ("sessions_spawn", r#"{"task": "quick job", "agentId": "worker"}"#),
    ]));
    f.main.push(Step::text("ok").when_last_contains("accepted"));
    f.work.push(
        Step::text("too late")
            .when_last_contains("slow job")
            .delay(Duration::from_secs(5)),
    );
    f.work.push(Step::text("fait").when_last_contains("quick job"));
    f.work
        .push(Step::text("C'est fait.").when_last_contains("Write the announcement"));
    f.turn("go").await;
    let results = tool_results(&f.main.requests()[1]);
    let (slow, _) = accepted(&results[0]);
    let (quick, _) = accepted(&results[1]);
    assert_eq!(f.wait_ended(&slow).await, "timed_out");
    let due = f.store().outbox().due(10).await.unwrap();
    let timeout = due.iter().find(|a| a.delivery_key == slow).unwrap();
    assert!(
        timeout
            .body
            .starts_with("Status: timeout\nResult: (not available)\nNotes: timed out after 1s"),
        "{}",
        timeout.body
    );
    // Only AGENTS.md/TOOLS.md from the workspace reach the child's context.
    let quick_req = f
        .work
        .requests()
        .into_iter()
        .find(|r| r.to_string().contains("quick job"))
        .unwrap();
    assert!(
        quick_req["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("# AGENTS.md\nAlways answer in French.")
    );
    assert_eq!(f.wait_ended(&quick).await, "completed");
    // archive_after_minutes (60 by default) is not due yet; nothing moves.
    let transcript = f.h.records("worker").join(format!("sessions/{quick}.jsonl"));
    for _ in 0..100 {
        if transcript.exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(f.h.runtime.archive_due().await, 0);
    assert!(transcript.exists());
}

#[tokio::test]
async fn archiving_is_computed_from_stored_times() {
    // The usual fixture with archive_after_minutes = 0: due as soon as ended.
    let f = fx_edited(|toml| {
        toml.replace(
            "max_children_per_agent = 3",
            "max_children_per_agent = 3\narchive_after_minutes = 0",
        )
    })
    .await;
    f.main.push(Step::tool_call(
        "sessions_spawn",
        json!({"task": "archive me", "agentId": "worker"}),
    ));
    f.main.push(Step::text("ok").when_last_contains("accepted"));
    f.work.push(Step::text("done").when_last_contains("archive me"));
    f.work
        .push(Step::text("ANNOUNCE_SKIP").when_last_contains("Write the announcement"));
    f.turn("go").await;
    let (run_id, _) = accepted(&last_tool_result(&f.main));
    let transcript = f.h.records("worker").join(format!("sessions/{run_id}.jsonl"));
    for _ in 0..200 {
        if transcript.exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(transcript.exists());
    assert_eq!(f.h.runtime.archive_due().await, 1);
    assert!(!transcript.exists());
    let names: Vec<String> = std::fs::read_dir(f.h.records("worker").join("sessions"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    assert!(
        names.iter().any(|n| n.starts_with(&format!("{run_id}.jsonl.deleted."))),
        "{names:?}"
    );
    assert_eq!(f.h.runtime.archive_due().await, 0, "archived once");
}
