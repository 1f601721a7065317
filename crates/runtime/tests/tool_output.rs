//! What the agent loop does with many calls, cut-off answers and large
//! tool output, over real HTTP against the scripted model.

mod common;

use common::*;
use serde_json::json;
use std::sync::Arc;
use switchboard_runtime::NoApprover;
use switchboard_test_support::{ScriptedModel, Step};

#[tokio::test]
async fn many_calls_in_one_answer_keep_their_order() {
    let model = ScriptedModel::start().await;
    // Shell calls (a process each) between quick file writes, so calls end
    // out of order; more calls than are started between checks.
    let calls: Vec<(String, String)> = (0..40)
        .map(|i| {
            if i % 2 == 0 {
                ("shell".to_string(), json!({"command": format!("echo {i}")}).to_string())
            } else {
                let args = json!({"path": format!("f{i}.txt"), "content": format!("{i}")});
                ("file_write".to_string(), args.to_string())
            }
        })
        .collect();
    let refs: Vec<(&str, &str)> = calls.iter().map(|(n, a)| (n.as_str(), a.as_str())).collect();
    model.push(Step::tool_calls(&refs));
    model.push(Step::text("all done"));
    let h = harness(&format!("{}{PROFILE}", provider("primary", &model.url(), ""))).await;
    let reply = h.turn("go", Arc::new(NoApprover("none".into()))).await.unwrap();
    assert_eq!(reply.text, "all done");
    assert_eq!(reply.tools_completed, 40);
    let results = tool_results(&model.requests()[1]);
    assert_eq!(results.len(), 40);
    for (i, r) in results.iter().enumerate() {
        if i % 2 == 0 {
            assert_eq!(r.trim(), i.to_string(), "result {i} out of order: {results:?}");
        } else {
            assert!(r.starts_with("wrote"), "result {i}: {r}");
        }
    }
    let ids: Vec<String> = model.requests()[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["tool_call_id"].as_str().map(str::to_string))
        .collect();
    let asked: Vec<String> = model.requests()[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["tool_calls"].as_array().cloned().unwrap_or_default())
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, asked, "each result follows its call's position");
}

/// An answer stopped at the output limit is marked as cut off; a tool call
/// cut off mid-arguments is not run and the model is told why.
#[tokio::test]
async fn cut_off_answers_are_marked_and_cut_off_calls_are_not_run() {
    for kind in ["openai", "anthropic"] {
        let model = ScriptedModel::start().await;
        model.push(Step::tool_call("file_write", json!({"path": "big.txt", "content": "part"})).cut_off());
        model.push(Step::text("The report begins: lorem ipsum").cut_off());
        let providers = if kind == "anthropic" {
            format!(
                "[providers.primary]\nkind = \"anthropic\"\nbase_url = \"{}\"\nmodel = \"claude-x\"\nmax_retries = 0\n",
                model.url()
            )
        } else {
            provider("primary", &model.url(), "")
        };
        let h = harness(&format!("{providers}{PROFILE}")).await;
        let reply = h.turn("write it", Arc::new(NoApprover("none".into()))).await.unwrap();
        assert_eq!(
            reply.text, "The report begins: lorem ipsum\n\n…(cut off at the model's output limit)",
            "{kind}"
        );
        assert!(
            !h.workspace("main").join("big.txt").exists(),
            "{kind}: the cut-off call ran"
        );
        // The second request carries the tool result that says why.
        let told = model.requests()[1].to_string();
        assert!(
            told.contains("cut off at the model's output limit before its arguments"),
            "{kind}: {told}"
        );
    }
}

/// `file_read` reads at most its limit of a large file and says how big
/// the file is.
#[tokio::test]
async fn file_read_reads_at_most_its_limit() {
    let model = ScriptedModel::start().await;
    model.push(Step::tool_call("file_read", json!({"path": "big.log"})));
    model.push(Step::text("read"));
    let h = harness(&format!("{}{PROFILE}", provider("primary", &model.url(), ""))).await;
    std::fs::create_dir_all(h.workspace("main")).unwrap();
    std::fs::write(h.workspace("main").join("big.log"), "y".repeat(3_000_000)).unwrap();
    h.turn("read it", Arc::new(NoApprover("none".into()))).await.unwrap();
    let result = &tool_results(&model.requests()[1])[0];
    assert!(
        result.ends_with("[truncated: the file is 3000000 bytes; the first 262144 are shown]"),
        "{}",
        &result[result.len() - 100..]
    );
    assert!(result.len() < 262_144 + 200);
}
