//! `delegate` (docs/delegation.md): every contract string, byte for byte, produced by
//! the real tool inside the real loop, driven by scripted models.

mod common;
mod delegation_fx;

use common::*;
use delegation_fx::*;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use switchboard_runtime::NoApprover;
use switchboard_test_support::{ScriptedModel, Step, offered_tools};

#[tokio::test]
async fn sync_success_has_the_attribution_header() {
    let f = fx("").await;
    f.reviewer.push(Step::text("Looks good."));
    let out = f
        .delegate(json!({"agent": "reviewer", "prompt": "review this", "context": "diff --git"}))
        .await;
    assert_eq!(out, "[Agent 'reviewer' (openai/prev-model)]\nLooks good.");
    let child_req = &f.reviewer.requests()[0];
    let last = child_req["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(last, "review this\n\nContext:\ndiff --git");
}

#[tokio::test]
async fn fallback_header_and_warning() {
    let backup = ScriptedModel::start().await;
    backup.push(Step::text("Recovered answer."));
    let extra = provider("pbackup", &backup.url(), "");
    let f = fx_with(&extra, |c| {
        c.providers.get_mut("prev").unwrap().fallbacks = vec!["pbackup".into()];
    })
    .await;
    f.reviewer.push(Step::status(500));
    let out = f.delegate(json!({"agent": "reviewer", "prompt": "x"})).await;
    assert_eq!(
        out,
        "[Agent 'reviewer' (requested: openai/prev-model; served: openai/pbackup-model, agentic)]\nRecovered answer.\n\nWarning: The delegated agent recovered through a provider fallback. Provider failure details were logged and omitted from this result."
    );
}

#[tokio::test]
async fn empty_answer_other_failure_and_timeout() {
    let f = fx("[runtime_profiles.slow]\ndelegation_timeout_secs = 1\n").await;
    f.reviewer.push(Step::text(""));
    assert_eq!(
        f.delegate(json!({"agent": "reviewer", "prompt": "x"})).await,
        error("Agent 'reviewer' failed: model provider returned an invalid semantic completion.")
    );
    f.reviewer.push(Step::status(503));
    assert_eq!(
        f.delegate(json!({"agent": "reviewer", "prompt": "y"})).await,
        error("Agent 'reviewer' failed: model provider 'prev' failed with HTTP 503")
    );
    let f = fx_with("[runtime_profiles.slow]\ndelegation_timeout_secs = 1\n", |c| {
        c.agents.get_mut("reviewer").unwrap().runtime_profile = "slow".into();
    })
    .await;
    f.reviewer.push(Step::text("too late").delay(Duration::from_secs(3)));
    assert_eq!(
        f.delegate(json!({"agent": "reviewer", "prompt": "z"})).await,
        error("Agent 'reviewer' timed out after 1s")
    );
}

#[tokio::test]
async fn policy_gate_refuses_first() {
    let f = fx_with("", |c| {
        c.risk_profiles.get_mut("lead").unwrap().delegation_policy.mode = switchboard_config::DelegationMode::Forbidden;
    })
    .await;
    assert_eq!(
        f.delegate(json!({"agent": "nobody", "prompt": "x"})).await,
        error(
            "delegation is forbidden for caller \"main\" by risk profile \"lead\" delegation_policy; set [risk_profiles.lead].delegation_policy mode = \"allow\""
        )
    );
    // The schema says so instead of listing a roster.
    let desc = f.main.requests()[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "delegate")
        .unwrap()["function"]["parameters"]["properties"]["agent"]["description"]
        .clone();
    assert!(desc.as_str().unwrap().contains("forbidden"), "{desc}");
}

#[tokio::test]
async fn roster_lists_exactly_the_reachable_agents() {
    let f = fx("[agents.off]\nmodel_provider = \"prev\"\nrisk_profile = \"lead\"\nenabled = false\n").await;
    f.main.push(Step::text("hi"));
    f.h.turn("hi", Arc::new(NoApprover("none".into()))).await.unwrap();
    let tools = f.main.requests()[0]["tools"].as_array().unwrap().clone();
    let d = tools.iter().find(|t| t["function"]["name"] == "delegate").unwrap();
    assert_eq!(
        d["function"]["parameters"]["properties"]["agent"]["description"],
        "The agent to delegate to. Reachable agents: ops, reviewer"
    );
}

#[tokio::test]
async fn reachability_refusals() {
    let extra = "[agents.other]\nmodel_provider = \"prev\"\nrisk_profile = \"opsprof\"\n[agents.off]\nmodel_provider = \"prev\"\nrisk_profile = \"lead\"\nenabled = false\n";
    let f = fx(extra).await;
    assert_eq!(
        f.delegate(json!({"agent": "other", "prompt": "x"})).await,
        error(
            "delegate target \"other\" is not reachable from \"main\": different risk profile (caller uses \"lead\", target uses \"opsprof\"). delegate_same_risk_profile only reaches agents with the same risk profile; add an explicit [agents.main].delegates entry with the intended mode, or change one agent's risk_profile."
        )
    );
    assert_eq!(
        f.delegate(json!({"agent": "off", "prompt": "x"})).await,
        error("delegate target \"off\" is not reachable from \"main\": the target agent is disabled")
    );
    let f = fx_with(extra, |c| {
        c.agents.get_mut("main").unwrap().delegate_same_risk_profile = false;
    })
    .await;
    assert_eq!(
        f.delegate(json!({"agent": "reviewer", "prompt": "x"})).await,
        error(
            "delegate target \"reviewer\" is not reachable from \"main\": delegate_same_risk_profile is disabled and the target is not listed in [agents.main].delegates"
        )
    );
}

#[tokio::test]
async fn unknown_agent_action_and_task() {
    let f = fx("").await;
    assert_eq!(
        f.delegate(json!({"agent": "ghost", "prompt": "x"})).await,
        error("Unknown agent 'ghost'. Available agents: ops, reviewer")
    );
    assert_eq!(
        f.delegate(json!({"action": "explode"})).await,
        error("Unknown action 'explode'. Use delegate/check_result/list_results/cancel_task/await_sessions.")
    );
    let id = uuid::Uuid::new_v4();
    assert_eq!(
        f.delegate(json!({"action": "check_result", "task_id": id.to_string()}))
            .await,
        error(&format!("No result found for task_id '{id}'"))
    );
}

#[tokio::test]
async fn depth_limit() {
    let f = fx_with("", |c| {
        c.runtime_profiles.get_mut("default").unwrap().max_delegation_depth = 0;
    })
    .await;
    assert_eq!(
        f.delegate(json!({"agent": "reviewer", "prompt": "x"})).await,
        error("Delegation depth limit reached (0/0).")
    );
}

#[tokio::test]
async fn depth_tightens_hop_by_hop() {
    // main (max 3) -> reviewer (its profile says 1): reviewer may not delegate again.
    let f = fx_with("[runtime_profiles.shallow]\nmax_delegation_depth = 1\n", |c| {
        c.agents.get_mut("reviewer").unwrap().runtime_profile = "shallow".into();
    })
    .await;
    f.reviewer.push(Step::tool_call(
        "delegate",
        json!({"agent": "main", "prompt": "back to you"}),
    ));
    f.reviewer.push(Step::text("could not"));
    let out = f.delegate(json!({"agent": "reviewer", "prompt": "x"})).await;
    assert_eq!(out, "[Agent 'reviewer' (openai/prev-model)]\ncould not");
    assert_eq!(
        last_tool_result(&f.reviewer),
        error("Delegation depth limit reached (1/1).")
    );
}

#[tokio::test]
async fn always_ask_without_a_route_refuses_independent() {
    let f = fx_with("", |c| {
        c.risk_profiles.get_mut("opsprof").unwrap().always_ask = vec!["shell".into(), "file_write".into()];
        c.risk_profiles.get_mut("lead").unwrap().always_ask = vec!["memory_store".into()];
    })
    .await;
    assert_eq!(
        f.delegate(json!({"agent": "ops", "prompt": "x"})).await,
        error(
            "delegate target \"ops\" cannot run in independent mode from \"main\": risk profile \"opsprof\" has always_ask entries (shell, file_write). See the documentation, \"Delegation & SubAgents\" > \"What's not supported\"."
        )
    );
}

#[tokio::test]
async fn always_ask_bounded_agentic() {
    let extra = "[agents.strict]\nmodel_provider = \"prev\"\nrisk_profile = \"lead2\"\n[risk_profiles.lead2]\nlevel = \"full\"\nalways_ask = [\"file_write\"]\n";
    let f = fx_with(extra, |c| {
        c.agents
            .get_mut("main")
            .unwrap()
            .delegates
            .push(switchboard_config::DelegateEntry::Alias("strict".into()));
    })
    .await;
    assert_eq!(
        f.delegate(json!({"agent": "strict", "prompt": "x"})).await,
        error(
            "delegate target \"strict\" cannot run in bounded agentic mode from \"main\": risk profile \"lead2\" has always_ask entries (file_write). See the documentation, \"Delegation & SubAgents\" > \"What's not supported\"."
        )
    );
}

#[tokio::test]
async fn independent_with_complete_route_runs_despite_always_ask() {
    let f = fx_with("", |c| {
        let p = c.risk_profiles.get_mut("opsprof").unwrap();
        p.always_ask = vec!["shell".into()];
        p.approval_route = Some(ops_room_route());
    })
    .await;
    f.ops.push(Step::text("ran"));
    assert_eq!(
        f.delegate(json!({"agent": "ops", "prompt": "x"})).await,
        "[Agent 'ops' (openai/pops-model)]\nran"
    );
}

/// With an operator route, a dangerous command in a delegated run is asked
/// for every time: an "always" answer does not cover the next one.
#[tokio::test]
async fn no_grant_covers_a_dangerous_command_in_a_child() {
    let f = fx_with("", |c| {
        let p = c.risk_profiles.get_mut("opsprof").unwrap();
        p.approval_route = Some(ops_room_route());
    })
    .await;
    let broker = FixedBroker::approving("cli:alice", true);
    f.h.runtime.set_route_broker(broker.clone());
    f.ops
        .push(Step::tool_call("shell", json!({"command": "psql -c 'DROP TABLE a'"})));
    f.ops
        .push(Step::tool_call("shell", json!({"command": "psql -c 'DROP TABLE b'"})));
    f.ops.push(Step::text("tried"));
    f.delegate(json!({"agent": "ops", "prompt": "x"})).await;
    let asked: Vec<String> = broker.seen.lock().unwrap().iter().map(|r| r.summary.clone()).collect();
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert!(asked[1].contains("DROP TABLE b"), "{asked:?}");
}

#[tokio::test]
async fn agentic_target_without_a_risk_profile() {
    let f = fx_with("", |c| c.agents.get_mut("ops").unwrap().risk_profile = "missing".into()).await;
    assert_eq!(
        f.delegate(json!({"agent": "ops", "prompt": "x"})).await,
        error("Agent 'ops' is agentic but risk_profile 'missing' is not configured")
    );
}

#[tokio::test]
async fn agentic_target_with_zero_tools_gets_a_plain_turn() {
    let f = fx_with("", |c| {
        c.risk_profiles.get_mut("opsprof").unwrap().deny_all_tools = true;
    })
    .await;
    f.ops.push(Step::text("plain"));
    assert_eq!(
        f.delegate(json!({"agent": "ops", "prompt": "x"})).await,
        "[Agent 'ops' (openai/pops-model)]\nplain"
    );
    assert!(offered_tools(&f.ops.requests()[0]).is_empty());
}

#[tokio::test]
async fn non_agentic_target_gets_one_call_without_tools() {
    let f = fx_with("[runtime_profiles.plain]\nagentic = false\n", |c| {
        c.agents.get_mut("reviewer").unwrap().runtime_profile = "plain".into();
    })
    .await;
    f.reviewer.push(Step::text("one shot"));
    assert_eq!(
        f.delegate(json!({"agent": "reviewer", "prompt": "x"})).await,
        "[Agent 'reviewer' (openai/prev-model)]\none shot"
    );
    assert!(offered_tools(&f.reviewer.requests()[0]).is_empty());
}

#[tokio::test]
async fn bounded_cross_profile_target_never_gets_a_tool_the_caller_lacks() {
    // main excludes shell; "worker" (other profile, allows shell) is an explicit bounded delegate.
    let extra = "[agents.worker]\nmodel_provider = \"prev\"\nrisk_profile = \"wide\"\n[risk_profiles.wide]\nlevel = \"full\"\nallowed_tools = [\"shell\", \"file_read\", \"memory_recall\"]\nallowed_commands = [\"echo\"]\n";
    let f = fx_with(extra, |c| {
        c.agents
            .get_mut("main")
            .unwrap()
            .delegates
            .push(switchboard_config::DelegateEntry::Alias("worker".into()));
    })
    .await;
    f.reviewer.push(Step::text("ok"));
    f.delegate(json!({"agent": "worker", "prompt": "x"})).await;
    let tools = offered_tools(&f.reviewer.requests()[0]);
    assert!(!tools.contains(&"shell".to_string()), "{tools:?}");
    let mut sorted = tools.clone();
    sorted.sort();
    assert_eq!(sorted, ["file_read", "memory_recall"]);
}

#[tokio::test]
async fn independent_target_gets_its_own_registry_without_delegate() {
    let f = fx("").await;
    f.ops
        .push(Step::tool_call("shell", json!({"command": "echo from-ops"})));
    f.ops.push(Step::text("ops done"));
    f.delegate(json!({"agent": "ops", "prompt": "x"})).await;
    let tools = offered_tools(&f.ops.requests()[0]);
    assert!(
        tools.contains(&"shell".to_string()),
        "own registry has shell: {tools:?}"
    );
    assert!(!tools.contains(&"delegate".to_string()), "{tools:?}");
    assert_eq!(last_tool_result(&f.ops).trim(), "from-ops");
}

#[tokio::test]
async fn parallel_fan_out() {
    let f = fx("").await;
    f.reviewer.push(Step::text("R"));
    f.ops.push(Step::status(500));
    let out = f
        .delegate(json!({"parallel": ["reviewer", "ops", "ghost"], "prompt": "same task"}))
        .await;
    assert_eq!(
        out,
        "[Parallel delegation: 3 agents]\n\n--- reviewer (success=true) ---\n[Agent 'reviewer' (openai/prev-model)]\nR\n\n--- ops (success=false) ---\nError: Agent 'ops' failed: model provider 'pops' failed with HTTP 500\n\n--- ghost (success=false) ---\nError: Unknown agent 'ghost'. Available agents: ops, reviewer"
    );
}

#[tokio::test]
async fn paused_refuses_with_the_exact_string() {
    let f = fx("").await;
    f.h.runtime.core().live().set_paused(None, true);
    assert_eq!(
        f.delegate(json!({"agent": "reviewer", "prompt": "x"})).await,
        error("Delegation spawning is paused. Resume it with /subagents resume before retrying.")
    );
}

#[tokio::test]
async fn a_paused_agent_takes_no_delegation_from_an_unpaused_one() {
    let f = fx("").await;
    f.h.runtime.core().live().set_paused(Some("reviewer"), true);
    assert_eq!(
        f.delegate(json!({"agent": "reviewer", "prompt": "x"})).await,
        error(
            "Agent 'reviewer' is paused: delegations to it are refused until an approver of it runs /subagents resume."
        )
    );
    assert!(f.reviewer.requests().is_empty());
    f.ops.push(Step::text("ops ran"));
    let out = f.delegate(json!({"agent": "ops", "prompt": "x"})).await;
    assert!(out.contains("ops ran"), "{out}");
}
