//! `sessions_spawn`: start a child session; never blocks.

use crate::children::{ChildSpec, Detached, Verdict};
use crate::core::{Core, RunParts};
use crate::rules::Rules;
use crate::scope::{ChildRow, RunScope};
use crate::tools::{Tool, ToolContext, ToolRegistry, ToolResult};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use switchboard_config::SubagentsConfig;
use switchboard_store::{RunKind, RunStatus};

/// `sessions_spawn`: start a child session.
pub struct SessionsSpawn;

#[derive(Deserialize, Default)]
#[serde(default)]
struct Args {
    task: Option<String>,
    label: Option<String>,
    #[serde(rename = "agentId")]
    agent_id: Option<String>,
    model: Option<String>,
    thinking: Option<String>,
    #[serde(rename = "runTimeoutSeconds")]
    run_timeout_seconds: Option<u64>,
    cleanup: Option<String>,
}

#[async_trait]
impl Tool for SessionsSpawn {
    fn name(&self) -> &'static str {
        "sessions_spawn"
    }
    async fn execute(&self, args: Value, ctx: &ToolContext) -> ToolResult {
        let args: Args = crate::tools::tool_args!(self, args);
        let Some(task) = args.task.as_deref().map(str::trim).filter(|t| !t.is_empty()) else {
            return ToolResult::fail("Missing or empty 'task' parameter");
        };
        let core = &crate::core::runtime_of!(ctx);
        // One snapshot of the rules throughout (a reload may replace them).
        let rules = core.rules();
        let root = ctx.root_agent();
        let Some(limits) = rules.agent(&root).map(|a| &a.config.subagents) else {
            return ToolResult::fail(format!("agent '{root}' is no longer configured"));
        };
        if let Some(refused) = core.spawning_paused(ctx) {
            return refused;
        }
        let (agent_id, depth, max_depth) = match admissible(&rules.config, ctx, &args) {
            Ok(v) => v,
            Err(why) => return ToolResult::fail(why),
        };
        // Held until the child is recorded: parallel spawns count one by one.
        let turn = core.live.spawn_turn(&ctx.session_key).await;
        if let Err(why) = room_for_a_child(ctx, &root, limits.max_children_per_agent).await {
            return ToolResult::fail(why);
        }
        let (spec, warning) = match child(core, &rules, ctx, (&args, limits), task, (&agent_id, depth, max_depth)) {
            Ok(v) => v,
            Err(why) => return ToolResult::fail(why),
        };
        let (run_id, session_key) = (spec.row.id.clone(), spec.row.session_key.clone());
        let delete = args.cleanup.as_deref() == Some("delete");
        if let Err(e) = crate::children::detach(core, spec, Detached::Session(delete)).await {
            return ToolResult::fail(format!("sessions_spawn failed: the run could not be recorded ({e})"));
        }
        drop(turn);
        let mut accepted = json!({"status": "accepted", "runId": run_id, "childSessionKey": session_key});
        if let Some(w) = warning {
            accepted["warning"] = json!(w);
        }
        ToolResult::ok(accepted.to_string())
    }
}

/// The child session `agent` runs for `task`, at spawn depth `depth` of
/// at most `max_depth`, under `rules` (the call's one snapshot) and the
/// root agent's `limits` (`[agents.<root>.subagents]`); with the
/// warning for the model when the model it asked for is unknown. The
/// refusal when the agent or its provider is gone.
fn child(
    core: &Arc<Core>,
    rules: &Arc<Rules>,
    ctx: &ToolContext,
    (args, limits): (&Args, &SubagentsConfig),
    task: &str,
    (agent, depth, max_depth): (&str, u32, u32),
) -> Result<(ChildSpec, Option<String>), String> {
    let config = &rules.config;
    let target = rules
        .agent(agent)
        .ok_or_else(|| format!("agent '{agent}' is no longer configured"))?;
    let default_provider = limits
        .model
        .clone()
        .unwrap_or_else(|| target.config.model_provider.clone());
    let (provider, warning) = provider_for(config, args.model.as_deref(), default_provider);
    let chain = rules
        .providers
        .chain_for(&provider)
        .map_err(|e| format!("sessions_spawn failed: {e}"))?;
    let run_id = uuid::Uuid::new_v4().to_string();
    let session_key: String = switchboard_core::SessionKey::child_session(agent, &run_id).into();
    let mut owner_chain = ctx.scope.owner_chain.clone();
    owner_chain.push(agent.to_string());
    let mut row = ctx.scope.child_row(ChildRow {
        id: &run_id,
        kind: RunKind::SessionsSpawn,
        agent,
        session_key: &session_key,
        owner_chain: owner_chain.clone(),
        depth: depth as i64,
        task,
        model: chain.primary().model(),
        requester_session: &ctx.session_key,
    });
    row.label = args.label.clone();
    row.announce = crate::children::announces_into_chat(depth);
    let base = Core::agent_parts(rules, target, session_key, chain);
    let risk = &base.approval_profile.1;
    let leaf = depth >= max_depth;
    let registry = child_registry(&core.builtin, risk, leaf, &limits.tools.allow, &limits.tools.deny);
    let system_prompt = system_prompt(
        &target.config.system_prompt,
        &base.policy.workspace,
        args.thinking.as_deref(),
    );
    let broker = core.route_broker_for(risk);
    let scope = RunScope {
        root_id: Some(row.root_id.clone()),
        spawn_depth: depth,
        max_spawn_depth: max_depth,
        ..ctx.scope.for_child(owner_chain, agent)
    };
    let parts = RunParts {
        registry,
        system_prompt,
        broker,
        scope,
        ..base
    };
    let spec = ChildSpec {
        row,
        parts,
        task: task.to_string(),
        timeout: args.run_timeout_seconds.filter(|s| *s > 0).map(Duration::from_secs),
        verdict: Verdict::Plain,
    };
    Ok((spec, warning))
}

/// A child's tools: its own risk profile's, without `model_switch`; leaves
/// lose every session tool; `[agents.<root>.subagents].tools` applies
/// (deny wins; a non-empty allow list keeps only what it names).
fn child_registry(
    builtin: &ToolRegistry,
    risk: &switchboard_config::RiskProfile,
    leaf: bool,
    allow: &[String],
    deny: &[String],
) -> ToolRegistry {
    let mut r = builtin.filtered(risk).without("model_switch");
    for name in builtin.names() {
        let session_tool = super::SESSION_TOOLS.contains(&name);
        let denied = deny.iter().any(|d| d == name) || (!allow.is_empty() && !allow.iter().any(|a| a == name));
        if (leaf && session_tool) || denied {
            r = r.without(name);
        }
    }
    r
}

/// Whether this run may spawn a child session now: the agent it names (or
/// its own), at which spawn depth, out of how many; the refusal otherwise.
fn admissible(
    config: &switchboard_config::Config,
    ctx: &ToolContext,
    args: &Args,
) -> Result<(String, u32, u32), String> {
    let root = ctx.root_agent();
    let agent_id = args.agent_id.clone().unwrap_or_else(|| ctx.agent.clone());
    let allowed = super::allowed_agents(config, &root);
    if !allowed.contains(&agent_id) {
        return Err(format!(
            "agentId '{agent_id}' is not allowed by [agents.{root}.subagents].allow_agents; allowed: {}",
            allowed.join(", ")
        ));
    }
    let depth = ctx.scope.spawn_depth + 1;
    let max_depth = ctx.scope.max_spawn_depth.max(1);
    if depth > max_depth {
        return Err(format!(
            "sessions_spawn: spawn depth limit reached ({}/{max_depth}); raise [agents.{root}.subagents].max_spawn_depth",
            ctx.scope.spawn_depth
        ));
    }
    Ok((agent_id, depth, max_depth))
}

/// The provider the child uses: the one asked for when it exists, else the
/// default (with a warning for the model).
fn provider_for(config: &switchboard_config::Config, asked: Option<&str>, default: String) -> (String, Option<String>) {
    match asked {
        Some(m) if config.providers.contains_key(m) => (m.to_string(), None),
        Some(m) => {
            let warning = format!("unknown model '{m}'; using the default provider '{default}'");
            (default, Some(warning))
        }
        None => (default, None),
    }
}

/// The child's system prompt: the agent's, its workspace's `AGENTS.md` and
/// `TOOLS.md`, and the thinking effort asked for.
fn system_prompt(base: &str, workspace: &std::path::Path, thinking: Option<&str>) -> String {
    let mut prompt = base.to_string();
    for file in ["AGENTS.md", "TOOLS.md"] {
        if let Ok(text) = std::fs::read_to_string(workspace.join(file)) {
            prompt.push_str(&format!("\n\n# {file}\n{text}"));
        }
    }
    if let Some(level) = thinking {
        prompt.push_str(&format!("\n\nThinking effort requested: {level}."));
    }
    prompt
}

/// Whether this session may start one more child: fewer than `max` of its
/// children are running (counted while the session's spawn turn is held).
async fn room_for_a_child(ctx: &ToolContext, root: &str, max: u32) -> Result<(), String> {
    let active = match ctx.store.runs().of_session(&ctx.session_key, 100).await {
        Ok(rows) => rows
            .iter()
            .filter(|r| r.kind == RunKind::SessionsSpawn && r.status == RunStatus::Running)
            .count(),
        Err(e) => return Err(format!("the session registry could not be read ({e})")),
    };
    if active >= max as usize {
        return Err(format!(
            "sessions_spawn: {active} child sessions are already active here ([agents.{root}.subagents].max_children_per_agent = {max}); wait for one to end or kill it"
        ));
    }
    Ok(())
}
