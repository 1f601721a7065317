//! Planning and running one delegated child: the target-side gates, the
//! bounded or independent build of its run, and the result strings.

use crate::agent::{TurnError, TurnReply};
use crate::approval::NoApprover;
use crate::core::{Core, RunParts};
use crate::policy::SecurityPolicy;
use crate::progress::ProgressRecorder;
use crate::scope::{ChildRow, RunScope, TreeBudget};
use crate::tools::{ToolContext, ToolRegistry, ToolResult};
use std::sync::Arc;
use std::time::Duration;
use switchboard_config::{DelegateMode, DelegationMode, RiskProfile};
use switchboard_store::{NewRun, RunEnd, RunKind, RunStatus};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

const FALLBACK_WARNING: &str = "Warning: The delegated agent recovered through a provider fallback. Provider failure details were logged and omitted from this result.";

/// A child ready to run: its parts and what the result strings need.
pub(crate) struct Plan {
    pub target: String,
    pub mode: DelegateMode,
    pub agentic: bool,
    /// Seconds the child may run (delegation timeout, or the agentic one in
    /// the background).
    pub foreground_timeout: u64,
    pub background_timeout: u64,
    pub parts: RunParts,
}

/// The target-side gates, in order, then the child's parts.
/// A child run's policy, tools, approval broker and scope.
type Guards = (
    Arc<SecurityPolicy>,
    ToolRegistry,
    Arc<dyn crate::ApprovalBroker>,
    RunScope,
);

pub(crate) fn plan(core: &Arc<Core>, ctx: &ToolContext, caller: &str, target: &str) -> Result<Plan, String> {
    let config = &core.config;
    let scope = &ctx.scope;
    let (mode, risk) = admissible(core, ctx, caller, target)?;
    let t = &config.agents[target];
    let tp = config.runtime_profile_of(target);
    let chain = core
        .providers
        .chain_for(&t.model_provider)
        .map_err(|e| format!("Agent '{target}' failed: {e}"))?;
    let mut owner_chain = scope.owner_chain.clone();
    owner_chain.push(target.to_string());
    let child_scope_base = RunScope {
        run_id: None,
        root_id: scope.root_id.clone().or_else(|| scope.run_id.clone()),
        depth: scope.depth + 1,
        max_depth: scope.max_depth.min(tp.max_delegation_depth),
        owner_chain,
        is_subagent: false,
        spawn_depth: scope.spawn_depth,
        max_spawn_depth: scope.max_spawn_depth,
        delegate_only: false,
        tree: None,
        is_tree_root: false,
        cost_chain: vec![target.to_string()],
        origin: scope.origin.clone(),
        requester: scope.requester.clone(),
        deadline: None,
        fresh_session: true,
        progress: None,
    };
    let (policy, registry, broker, scope_for_child) = match mode {
        DelegateMode::Bounded => bounded(core, ctx, caller, target, &risk, child_scope_base),
        DelegateMode::Independent => independent(core, target, &risk, child_scope_base),
    };
    let session_key: String = switchboard_core::SessionKey::delegate(target, &uuid::Uuid::new_v4().to_string()).into();
    let base = core
        .agent_parts(target, session_key, chain)
        .ok_or_else(|| format!("Agent '{target}' is not configured"))?;
    Ok(Plan {
        target: target.to_string(),
        mode,
        agentic: tp.agentic,
        foreground_timeout: tp.delegation_timeout_secs,
        background_timeout: if tp.agentic {
            tp.agentic_timeout_secs
        } else {
            tp.delegation_timeout_secs
        },
        parts: RunParts {
            policy,
            approval_profile: (t.risk_profile.clone(), risk),
            registry,
            broker,
            scope: scope_for_child,
            ..base
        },
    })
}

/// Whether `caller` may delegate to `target` now, with which mode and the
/// target's risk profile; the refusal the model is told otherwise.
fn admissible(
    core: &Arc<Core>,
    ctx: &ToolContext,
    caller: &str,
    target: &str,
) -> Result<(DelegateMode, RiskProfile), String> {
    let config = &core.config;
    let scope = &ctx.scope;
    if !config.agents.contains_key(target) {
        let roster: Vec<String> = super::reachable(config, caller).into_iter().map(|(a, _)| a).collect();
        return Err(format!(
            "Unknown agent '{target}'. Available agents: {}",
            roster.join(", ")
        ));
    }
    let mode = super::check_reachable(config, caller, target)?;
    // A paused agent takes no new work, whoever asks for it.
    if core.live.is_paused(target) {
        return Err(format!(
            "Agent '{target}' is paused: delegations to it are refused until an approver of it runs /subagents resume."
        ));
    }
    if scope.depth >= scope.max_depth {
        return Err(format!(
            "Delegation depth limit reached ({}/{}).",
            scope.depth, scope.max_depth
        ));
    }
    let t = &config.agents[target];
    let tp = config.runtime_profile_of(target);
    let risk = match config.risk_profiles.get(&t.risk_profile) {
        Some(r) => r.clone(),
        None if tp.agentic => {
            return Err(format!(
                "Agent '{target}' is agentic but risk_profile '{}' is not configured",
                t.risk_profile
            ));
        }
        None => RiskProfile::default(),
    };
    if tp.agentic && !risk.always_ask.is_empty() {
        let route_complete = risk
            .approval_route
            .as_ref()
            .is_some_and(switchboard_config::ApprovalRoute::is_complete);
        let refuse_as = match mode {
            DelegateMode::Independent if !route_complete => Some("independent mode"),
            DelegateMode::Bounded => Some("bounded agentic mode"),
            DelegateMode::Independent => None,
        };
        if let Some(how) = refuse_as {
            return Err(format!(
                "delegate target \"{target}\" cannot run in {how} from \"{caller}\": risk profile \"{}\" has always_ask entries ({}). See the documentation, \"Delegation & SubAgents\" > \"What's not supported\".",
                t.risk_profile,
                risk.always_ask.join(", ")
            ));
        }
    }
    Ok((mode, risk))
}

/// What a bounded delegate runs with: the caller's policy and tracker (its
/// cap tightened to the target's), the caller's tools within the target's
/// profile, no operator.
fn bounded(
    core: &Arc<Core>,
    ctx: &ToolContext,
    caller: &str,
    target: &str,
    risk: &RiskProfile,
    child_scope_base: RunScope,
) -> Guards {
    let config = &core.config;
    let scope = &ctx.scope;
    let t = &config.agents[target];
    let tp = config.runtime_profile_of(target);
    let caller_policy = &ctx.policy;
    let same_profile = config.agents[caller].risk_profile == t.risk_profile;
    // The caller's tracker is shared; its hourly cap tightens to the
    // target's when that is lower.
    let caller_cap = caller_policy.hourly_cap.unwrap_or(caller_policy.tracker.limit());
    let cap = caller_cap.min(tp.max_actions_per_hour);
    let policy = if same_profile && cap == caller_cap {
        caller_policy.clone()
    } else {
        let workspace = if same_profile {
            caller_policy.workspace.clone()
        } else {
            core.policies[target].workspace.clone()
        };
        let mut p = caller_policy.with_workspace(workspace);
        p.hourly_cap = Some(cap);
        Arc::new(p)
    };
    let mut registry = bounded_registry(&ctx.ceiling, risk);
    let sub_delegation = risk.delegation_policy.mode == DelegationMode::Allow;
    if !sub_delegation || !risk.offers_tool("delegate") {
        registry = registry.without("delegate");
    }
    let mut cost_chain = vec![target.to_string()];
    cost_chain.extend(scope.cost_chain.iter().cloned());
    let child_scope = RunScope {
        delegate_only: true,
        tree: scope.tree.clone(),
        cost_chain,
        ..child_scope_base
    };
    let broker: Arc<dyn crate::ApprovalBroker> = Arc::new(NoApprover(format!(
        "bounded delegated runs have no operator; list the tool in [risk_profiles.{}].auto_approve to let it run",
        t.risk_profile
    )));
    (policy, registry, broker, child_scope)
}

/// What an independent delegate runs with: its own policy, tools and
/// approval route, and an execution tree of its own.
fn independent(core: &Arc<Core>, target: &str, risk: &RiskProfile, child_scope_base: RunScope) -> Guards {
    let tp = core.config.runtime_profile_of(target);
    let registry = core.builtin.filtered(risk).without("delegate").without("model_switch");
    let child_scope = RunScope {
        tree: tp.max_execution_tree_iterations.map(|n| Arc::new(TreeBudget::new(n))),
        is_tree_root: true,
        ..child_scope_base
    };
    (
        core.policies[target].clone(),
        registry,
        core.route_broker_for(risk),
        child_scope,
    )
}

/// A bounded child's tools: the caller's filtered registry intersected with
/// the target's `allowed_tools` (empty = inherit, `deny_all_tools` = none),
/// minus the target's `excluded_tools`. Never more than the caller had.
fn bounded_registry(ceiling: &ToolRegistry, target: &RiskProfile) -> ToolRegistry {
    if target.deny_all_tools {
        return ToolRegistry::default();
    }
    let mut out = ceiling.without("model_switch");
    for name in ceiling.names() {
        let allowed = target.allowed_tools.is_empty() || target.allowed_tools.iter().any(|t| t == name);
        let excluded = target.excluded_tools.iter().any(|t| t == name);
        if !allowed || excluded {
            out = out.without(name);
        }
    }
    out
}

/// The run-registry row of a child about to start.
pub(crate) fn new_run(plan: &Plan, ctx: &ToolContext, id: &str, task: &str) -> NewRun {
    let model = plan.parts.chain.primary().model().to_string();
    ctx.scope.child_row(ChildRow {
        id,
        kind: RunKind::Delegate,
        agent: &plan.target,
        session_key: &plan.parts.session_key,
        owner_chain: ctx.scope.owner_chain.clone(),
        depth: plan.parts.scope.depth as i64,
        task,
        model: &model,
        requester_session: &ctx.session_key,
    })
}

/// How a child ended, ready for the tool result and the run row.
pub(crate) struct Outcome {
    pub result: Result<String, String>,
    pub status: RunStatus,
    pub reply: Option<TurnReply>,
}

/// Run a planned child to its end under `cancel` and `timeout`.
pub(crate) async fn execute(
    core: &Arc<Core>,
    mut plan: Plan,
    message: &str,
    run_id: &str,
    cancel: CancellationToken,
    timeout: u64,
    progress: Option<Arc<ProgressRecorder>>,
) -> Outcome {
    let target = plan.target.clone();
    let agentic = plan.agentic;
    let mode = plan.mode;
    plan.parts.cancel = cancel.clone();
    plan.parts.scope.run_id = Some(run_id.to_string());
    // A caller that brings its own recorder writes the final progress
    // with the ending; otherwise the one `assemble` makes is flushed here.
    let flush_here = progress.is_none();
    plan.parts.scope.progress = progress;
    plan.parts.scope.deadline = Some(tokio::time::Instant::now() + Duration::from_secs(timeout));
    let run = core.assemble(plan.parts);
    // Registered so `/subagents kill` can stop this run by id.
    let _registration = core.live.register_run(run_id, &cancel);
    let span =
        tracing::info_span!("delegate", agent_alias = %target, session_key = %run.ctx.session_key, run_id, ?mode);
    let ran = tokio::time::timeout(Duration::from_secs(timeout), run.run(message).instrument(span)).await;
    if let Some(p) = run.ctx.scope.progress.as_ref().filter(|_| flush_here) {
        p.flush().await;
    }
    match ran {
        Err(_) => {
            cancel.cancel();
            Outcome {
                result: Err(format!("Agent '{target}' timed out after {timeout}s")),
                status: RunStatus::TimedOut,
                reply: None,
            }
        }
        Ok(Err(TurnError::Cancelled)) => Outcome {
            result: Err(format!("Agent '{target}' failed: {}", TurnError::Cancelled)),
            status: RunStatus::Cancelled,
            reply: None,
        },
        Ok(Err(e)) => Outcome {
            result: Err(format!("Agent '{target}' failed: {e}")),
            status: RunStatus::Failed,
            reply: None,
        },
        Ok(Ok(reply)) => {
            let result = render_success(&target, &reply, agentic);
            let status = if result.is_ok() {
                RunStatus::Completed
            } else {
                RunStatus::Failed
            };
            Outcome {
                result,
                status,
                reply: Some(reply),
            }
        }
    }
}

/// `[Agent '<t>' (<provider_type>/<model>)]\n<answer>`, with the fallback
/// attribution and warning when another provider served the answer.
fn render_success(target: &str, reply: &TurnReply, agentic: bool) -> Result<String, String> {
    if reply.text.trim().is_empty() {
        return Err(format!(
            "Agent '{target}' failed: model provider returned an invalid semantic completion."
        ));
    }
    let Some(s) = &reply.served else {
        return Ok(reply.text.clone());
    };
    if s.fell_back() {
        let suffix = if agentic { ", agentic" } else { "" };
        Ok(format!(
            "[Agent '{target}' (requested: {}/{}; served: {}/{}{suffix})]\n{}\n\n{FALLBACK_WARNING}",
            s.requested_kind.as_str(),
            s.requested_model,
            s.kind.as_str(),
            s.model,
            reply.text
        ))
    } else {
        Ok(format!(
            "[Agent '{target}' ({}/{})]\n{}",
            s.kind.as_str(),
            s.model,
            reply.text
        ))
    }
}

/// What the run row records of `outcome`.
pub(crate) fn run_end<'a>(outcome: &'a Outcome, progress: Option<&'a str>) -> RunEnd<'a> {
    let (output, error) = match &outcome.result {
        Ok(text) => (Some(text.as_str()), None),
        Err(e) => (None, Some(e.as_str())),
    };
    let usage = outcome.reply.as_ref().map(|r| r.usage).unwrap_or_default();
    RunEnd {
        output,
        error,
        tokens_in: usage.input_tokens as i64,
        tokens_out: usage.output_tokens as i64,
        cost_micros: 0,
        progress,
    }
}

/// Store how a child ended (the first ending wins over a racing cancel).
/// True when this ending is the one recorded.
pub(crate) async fn record_end(core: &Core, run_id: &str, status: RunStatus, end: &RunEnd<'_>) -> bool {
    match core.store.finish_run(run_id, status, end).await {
        Ok(recorded) => recorded,
        Err(e) => {
            tracing::error!(run_id, error = %e, "cannot record the end of a delegated run");
            false
        }
    }
}

/// A foreground delegation: the caller waits; the child dies with the turn.
pub(crate) async fn run_foreground(core: &Arc<Core>, ctx: &ToolContext, plan: Plan, message: &str) -> ToolResult {
    let run_id = uuid::Uuid::new_v4().to_string();
    if let Err(e) = core.store.insert_run(&new_run(&plan, ctx, &run_id, message)).await {
        tracing::error!(error = %e, "cannot record a delegated run");
        return ToolResult::fail(format!("Agent '{}' failed: the run could not be recorded", plan.target));
    }
    let timeout = plan.foreground_timeout;
    let outcome = execute(core, plan, message, &run_id, ctx.cancel.child_token(), timeout, None).await;
    record_end(core, &run_id, outcome.status, &run_end(&outcome, None)).await;
    match outcome.result {
        Ok(text) => ToolResult::ok(text),
        Err(e) => ToolResult::fail(e),
    }
}
