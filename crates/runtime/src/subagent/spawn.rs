//! The `spawn_subagent` tool.

use crate::children::{ChildSpec, Verdict};
use crate::core::{Core, RunParts};
use crate::policy::SubAgentOverrides;
use crate::scope::{ChildRow, RunScope};
use crate::tools::{Tool, ToolContext, ToolResult};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::Value;
use std::sync::Arc;
use switchboard_store::RunKind;

/// `spawn_subagent`: a helper run of the same agent.
pub struct SpawnSubagent;

#[derive(Deserialize, Default)]
#[serde(default)]
struct Args {
    prompt: Option<String>,
    overrides: Option<SubAgentOverrides>,
}

#[async_trait]
impl Tool for SpawnSubagent {
    fn name(&self) -> &'static str {
        "spawn_subagent"
    }
    async fn execute(&self, args: Value, ctx: &ToolContext) -> ToolResult {
        let args: Args = crate::tools::tool_args!(self, args);
        let prompt = args.prompt.as_deref().map(str::trim).unwrap_or("").to_string();
        if prompt.is_empty() {
            return ToolResult::fail("Missing or empty 'prompt' parameter");
        }
        if ctx.scope.is_subagent {
            return ToolResult::fail("spawn_subagent: a subagent may not spawn its own subagents (depth-1 cap)");
        }
        let core = crate::core::runtime_of!(ctx);
        if let Some(refused) = core.spawning_paused(ctx) {
            return refused;
        }
        let spec = match spec(&core, ctx, prompt, args.overrides.as_ref()) {
            Ok(spec) => spec,
            Err(refused) => return refused,
        };
        match crate::children::wait(&core, spec).await {
            Err(e) => ToolResult::fail(format!("subagent spawn failed: the run could not be recorded ({e})")),
            Ok(outcome) => match outcome.result {
                Ok(text) if text.trim().is_empty() => ToolResult::ok("subagent completed without output"),
                Ok(text) => ToolResult::ok(text),
                Err(e) => ToolResult::fail(format!("subagent run failed: {e}")),
            },
        }
    }
}

/// The helper run of `ctx`'s agent for `prompt`: the same agent, policy
/// (narrowed by `overrides`, never widened), provider chain and memory,
/// a fresh session, no operator; or the refusal to return.
fn spec(
    core: &Core,
    ctx: &ToolContext,
    prompt: String,
    overrides: Option<&SubAgentOverrides>,
) -> Result<ChildSpec, ToolResult> {
    let parent = ctx.agent.clone();
    let uuid = uuid::Uuid::new_v4().to_string();
    let session_key: String = switchboard_core::SessionKey::helper(&uuid).into();
    let rules = core.rules();
    let Some(agent) = rules.agent(&parent) else {
        return Err(ToolResult::fail(format!(
            "subagent spawn failed: unknown agent '{parent}'"
        )));
    };
    let base = Core::agent_parts(&rules, agent, session_key.clone(), ctx.chain.clone());
    let risk = base.approval_profile.1.clone();
    if !risk.offers_tool("spawn_subagent") {
        return Err(ToolResult::fail(crate::policy::spawn_refused_by_profile(&parent)));
    }
    let policy = match overrides {
        None => ctx.policy.clone(),
        Some(o) => {
            let p = &base.agent.runtime;
            o.ensure_no_escalation_beyond(&ctx.policy, p.max_actions_per_hour, p.max_cost_per_day_cents)
                .map_err(|v| ToolResult::fail(format!("subagent spawn failed: {v}")))?;
            Arc::new(o.apply(&ctx.policy))
        }
    };
    let mut memory_readers = ctx.memory_readers.clone();
    if !memory_readers.contains(&parent) {
        memory_readers.insert(0, parent.clone());
    }
    let row = ctx.scope.child_row(ChildRow {
        id: &uuid,
        kind: RunKind::SpawnSubagent,
        agent: &parent,
        session_key: &session_key,
        owner_chain: ctx.scope.owner_chain.clone(),
        depth: i64::from(ctx.scope.depth) + 1,
        task: &prompt,
        model: ctx.chain.primary().model(),
        requester_session: &ctx.session_key,
    });
    let registry = core.builtin.filtered(&policy.profile).without("model_switch");
    // The child's approval gate decides with the narrowed policy: a
    // child spawned read_only cannot write, whatever the agent's profile.
    let mut approval = risk;
    approval.level = policy.profile.level;
    approval.block_high_risk_commands = policy.profile.block_high_risk_commands;
    approval.require_approval_for_medium_risk = policy.profile.require_approval_for_medium_risk;
    let parts = RunParts {
        policy,
        approval_profile: (base.approval_profile.0.clone(), approval),
        registry,
        temperature: ctx.temperature,
        broker: Arc::new(crate::NoApprover(
            "subagent runs have no operator; auto-approve the tool in the risk profile".into(),
        )),
        cancel: ctx.cancel.child_token(),
        scope: RunScope {
            is_subagent: true,
            is_tree_root: false,
            fresh_session: true,
            ..ctx.scope.clone()
        },
        memory_readers,
        ..base
    };
    Ok(ChildSpec {
        row,
        parts,
        task: prompt,
        timeout: None,
        verdict: Verdict::Plain,
    })
}
