//! `sessions_spawn` children and configuration reloads: a child runs
//! under the rules it was planned with.

mod common;
mod sessions_fx;

use serde_json::{Value, json};
use sessions_fx::*;
use std::time::Duration;
use switchboard_test_support::Step;

/// The `delegate` description one work-model request offered.
fn roster_offered(request: &Value) -> String {
    request["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|t| t["function"]["name"] == "delegate"))
        .map(|d| d["function"]["parameters"]["properties"]["agent"]["description"].to_string())
        .unwrap_or_else(|| panic!("no delegate tool offered in {request}"))
}

/// A child planned before a reload runs under the rules it was planned
/// with, even when it waits in the lane across the reload; one planned
/// after it runs under the new ones. Their `delegate` schemas (built
/// from the rules) tell which. (A child is assembled before it waits, so
/// this held before runs carried their rules too; it guards the order.)
#[tokio::test]
async fn a_queued_child_keeps_the_rules_it_was_planned_under() {
    let text = std::sync::Mutex::new(String::new());
    let f = fx_edited(|t| {
        let t = format!("{t}delegation_policy = {{ mode = \"allow\" }}\n[lanes.subagent]\nmax_concurrent = 1\n");
        *text.lock().unwrap() = t.clone();
        t
    })
    .await;
    let spawn = |task: &str| {
        (
            "sessions_spawn",
            format!(r#"{{"task": "{task}", "agentId": "worker"}}"#),
        )
    };
    let (slow, queued) = (spawn("slow job"), spawn("queued job"));
    f.main
        .push(Step::tool_calls(&[(slow.0, &slow.1), (queued.0, &queued.1)]));
    f.main.push(Step::text("both asked"));
    f.work.push(
        Step::text("slow done")
            .when_last_contains("slow job")
            .delay(Duration::from_millis(800)),
    );
    f.work.push(Step::text("queued done").when_last_contains("queued job"));
    for _ in 0..3 {
        f.work
            .push(Step::text("ANNOUNCE_SKIP").when_last_contains("Write the announcement"));
    }
    f.turn("two jobs").await;
    // The slow child holds the lane; the other waits in it. A reload
    // adds an agent every worker reaches.
    let d = f.h.dir.path().display().to_string();
    let reloaded = format!(
        "database_url = \"sqlite://{d}/cp.db\"\nworkspace_dir = \"{d}/ws\"\n{}[agents.extra]\nmodel_provider = \"pwork\"\n",
        text.lock().unwrap()
    );
    let config = switchboard_config::Config::from_toml_str(&reloaded, "reloaded").unwrap();
    f.h.runtime.core().apply(std::sync::Arc::new(config)).unwrap();
    f.main.push(Step::tool_call(
        "sessions_spawn",
        json!({"task": "later job", "agentId": "worker"}),
    ));
    f.main.push(Step::text("one more"));
    f.work.push(Step::text("later done").when_last_contains("later job"));
    f.turn("one more job").await;
    for _ in 0..200 {
        if f.work.remaining() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(f.work.remaining(), 0, "every child ran");
    let asked = |task: &str| {
        let requests = f.work.requests();
        let request = requests
            .iter()
            .find(|r| r["messages"].to_string().contains(task))
            .unwrap_or_else(|| panic!("no request for {task}"))
            .clone();
        roster_offered(&request)
    };
    let (before, after) = (asked("queued job"), asked("later job"));
    assert!(!before.contains("extra"), "planned before the reload: {before}");
    assert!(after.contains("extra"), "planned after the reload: {after}");
}
