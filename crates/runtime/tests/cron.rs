//! The cron spawn site: top-level runs that may spawn one level.

mod common;

use common::*;
use serde_json::json;
use switchboard_store::RunKind;
use switchboard_test_support::{ScriptedModel, Step};

#[tokio::test]
async fn a_cron_run_is_top_level_and_may_spawn_once() {
    let model = ScriptedModel::start().await;
    let toml = format!(
        "{}[agents.main]\nmodel_provider = \"p\"\n[risk_profiles.default]\nlevel = \"full\"\n[[cron]]\nid = \"nightly\"\nschedule = \"0 6 * * *\"\nagent = \"main\"\nprompt = \"Summarise the night.\"\ndeliver_to = \"cli:ops\"\n",
        provider("p", &model.url(), "")
    );
    let h = harness(&toml).await;
    model.push(Step::tool_call("spawn_subagent", json!({"prompt": "count incidents"})).when_last_contains("Summarise"));
    model.push(Step::text("3 incidents").when_last_contains("count incidents"));
    model.push(Step::text("Night summary: 3 incidents.").when_last_contains("3 incidents"));
    let job = h.runtime.config().cron[0].clone();
    let run = h.runtime.run_cron_job(&job).await;
    assert_eq!(run.result.unwrap().text, "Night summary: 3 incidents.");
    assert_eq!(run.session_key, format!("cron-{}", run.run_id));
    let store = h.runtime.store();
    let row = store.runs().get(&run.run_id).await.unwrap().unwrap();
    assert_eq!((row.kind.as_str(), row.status.as_str()), ("cron", "completed"));
    assert_eq!(row.output.as_deref(), Some("Night summary: 3 incidents."));
    assert_eq!(row.origin_channel.as_deref(), Some("cli"));
    let spawned = store.runs().owned_by(RunKind::SpawnSubagent, "main", 5).await.unwrap();
    assert_eq!(spawned.len(), 1);
    assert_eq!(spawned[0].parent_id.as_deref(), Some(run.run_id.as_str()));
    assert_eq!(spawned[0].status.as_str(), "completed");
    assert_eq!(tool_results(model.requests().last().unwrap()), ["3 incidents"]);
}

/// A cron run is registered like any other: killing it stops its turn (the
/// model's late answer — a tool call — is never acted on).
#[tokio::test]
async fn killing_a_cron_run_stops_it() {
    let model = ScriptedModel::start().await;
    let toml = format!(
        "{}[agents.main]\nmodel_provider = \"p\"\n[risk_profiles.default]\nlevel = \"full\"\n[[cron]]\nid = \"slow\"\nschedule = \"0 6 * * *\"\nagent = \"main\"\nprompt = \"Take your time.\"\n",
        provider("p", &model.url(), "")
    );
    let h = harness(&toml).await;
    model.push(
        Step::tool_call("memory_store", json!({"key": "late", "content": "ran"}))
            .delay(std::time::Duration::from_secs(3)),
    );
    model.push(Step::text("done"));
    let job = h.runtime.config().cron[0].clone();
    let runtime = h.runtime.clone();
    let running = tokio::spawn(async move { runtime.run_cron_job(&job).await });
    let store = h.runtime.store();
    let row = loop {
        let rows = store.runs().owned_by(RunKind::Cron, "main", 5).await.unwrap();
        if let Some(r) = rows.into_iter().next() {
            break r;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    // Killed while the model is answering (its run row exists a moment
    // before the request is sent).
    while model.requests().is_empty() {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let killed = h.runtime.core().kill_tree(vec![row.clone()], "test").await;
    assert_eq!(killed.len(), 1, "{killed:?}");
    assert!(row.id.starts_with(&killed[0]), "{killed:?}");
    let run = tokio::time::timeout(std::time::Duration::from_secs(2), running)
        .await
        .expect("the kill stopped the cron turn at once, not after the model answered")
        .unwrap();
    assert!(run.result.is_err(), "{:?}", run.result);
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    assert_eq!(model.requests().len(), 1, "nothing after the kill");
    let remembered = store.memory().recall(&["main".to_string()], "late", 5).await.unwrap();
    assert!(remembered.is_empty(), "the late tool call never ran");
    let row = store.runs().get(&row.id).await.unwrap().unwrap();
    assert_eq!(row.status.as_str(), "cancelled");
}
