//! Planning and running one delegated child: the target-side gates, the
//! bounded or independent build of its run, and the result strings.

use crate::approval::NoApprover;
use crate::core::{Core, RunParts};
use crate::policy::SecurityPolicy;
use crate::rules::{AgentRules, Rules};
use crate::scope::{ChildRow, RunScope, TreeBudget};
use crate::tools::{ToolContext, ToolRegistry};
use std::sync::Arc;
use switchboard_config::{DelegateMode, DelegationMode, RiskProfile};
use switchboard_store::{NewRun, RunKind};

/// A child ready to run: its parts and what the result strings need.
pub(crate) struct Plan {
    pub target: String,
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

pub(crate) fn plan(
    core: &Arc<Core>,
    rules: &Arc<Rules>,
    ctx: &ToolContext,
    caller: &AgentRules,
    target: &str,
) -> Result<Plan, String> {
    // `rules`: the tool call's one snapshot, in which the tool found the
    // caller and `admissible` looks the target up once.
    let scope = &ctx.scope;
    let (t, mode, risk) = admissible(core, rules, ctx, caller, target)?;
    let tp = &t.runtime;
    let chain = rules
        .providers
        .chain_for(&t.config.model_provider)
        .map_err(|e| format!("Agent '{target}' failed: {e}"))?;
    let mut owner_chain = scope.owner_chain.clone();
    owner_chain.push(target.to_string());
    let child_scope_base = RunScope {
        depth: scope.depth + 1,
        max_depth: scope.max_depth.min(tp.max_delegation_depth),
        ..scope.for_child(owner_chain, target)
    };
    let (policy, registry, broker, scope_for_child) = match mode {
        DelegateMode::Bounded => bounded(ctx, caller, t, &risk, child_scope_base),
        DelegateMode::Independent => independent(core, t, &risk, child_scope_base),
    };
    let session_key: String = switchboard_core::SessionKey::delegate(target, &uuid::Uuid::new_v4().to_string()).into();
    let base = Core::agent_parts(rules, t, session_key, chain);
    Ok(Plan {
        target: target.to_string(),
        agentic: tp.agentic,
        foreground_timeout: tp.delegation_timeout_secs,
        background_timeout: if tp.agentic {
            tp.agentic_timeout_secs
        } else {
            tp.delegation_timeout_secs
        },
        parts: RunParts {
            policy,
            approval_profile: (t.config.risk_profile.clone(), risk),
            registry,
            broker,
            scope: scope_for_child,
            ..base
        },
    })
}

/// Whether `caller` may delegate to `target` now: the target as `rules`
/// make it, the mode and the target's risk profile; the refusal the
/// model is told otherwise.
fn admissible<'r>(
    core: &Core,
    rules: &'r Rules,
    ctx: &ToolContext,
    caller: &AgentRules,
    target: &str,
) -> Result<(&'r Arc<AgentRules>, DelegateMode, RiskProfile), String> {
    let config = &rules.config;
    let scope = &ctx.scope;
    let caller = caller.name.as_str();
    let Some(t) = rules.agent(target) else {
        let roster: Vec<String> = config.reachable(caller).into_iter().map(|(a, _)| a).collect();
        return Err(format!(
            "Unknown agent '{target}'. Available agents: {}",
            roster.join(", ")
        ));
    };
    let mode = config.check_reachable(caller, target).map_err(|e| e.to_string())?;
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
    let tp = &t.runtime;
    let risk = match &t.risk {
        Some(r) => r.clone(),
        None if tp.agentic => {
            return Err(format!(
                "Agent '{target}' is agentic but risk_profile '{}' is not configured",
                t.config.risk_profile
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
                t.config.risk_profile,
                risk.always_ask.join(", ")
            ));
        }
    }
    Ok((t, mode, risk))
}

/// What a bounded delegate runs with: the caller's policy and tracker (its
/// cap tightened to the target's), the caller's tools within the target's
/// profile, no operator.
fn bounded(
    ctx: &ToolContext,
    caller: &AgentRules,
    t: &AgentRules,
    risk: &RiskProfile,
    child_scope_base: RunScope,
) -> Guards {
    let scope = &ctx.scope;
    let tp = &t.runtime;
    let caller_policy = &ctx.policy;
    let same_profile = caller.config.risk_profile == t.config.risk_profile;
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
            t.policy.workspace.clone()
        };
        let mut p = caller_policy.with_workspace(workspace);
        p.hourly_cap = Some(cap);
        Arc::new(p)
    };
    let mut registry = bounded_registry(&ctx.ceiling, risk);
    // MCP tools only of servers the target itself is configured to use:
    // its profile gates them, and it was never set up for the others.
    for name in registry.names() {
        if let Some((server, _)) = name.split_once('.')
            && !t.config.mcp_servers.iter().any(|s| s == server)
        {
            registry = registry.without(name);
        }
    }
    let sub_delegation = risk.delegation_policy.mode == DelegationMode::Allow;
    if !sub_delegation || !risk.offers_tool("delegate") {
        registry = registry.without("delegate");
    }
    let mut cost_chain = vec![t.name.clone()];
    cost_chain.extend(scope.cost_chain.iter().cloned());
    let child_scope = RunScope {
        delegate_only: true,
        tree: scope.tree.clone(),
        cost_chain,
        ..child_scope_base
    };
    let broker: Arc<dyn crate::ApprovalBroker> = Arc::new(NoApprover(format!(
        "bounded delegated runs have no operator; list the tool in [risk_profiles.{}].auto_approve to let it run",
        t.config.risk_profile
    )));
    (policy, registry, broker, child_scope)
}

/// What an independent delegate runs with: its own policy, tools and
/// approval route, and an execution tree of its own.
fn independent(core: &Arc<Core>, t: &AgentRules, risk: &RiskProfile, child_scope_base: RunScope) -> Guards {
    let tp = &t.runtime;
    let registry = core.builtin.filtered(risk).without("delegate").without("model_switch");
    let child_scope = RunScope {
        tree: tp.max_execution_tree_iterations.map(|n| Arc::new(TreeBudget::new(n))),
        is_tree_root: true,
        ..child_scope_base
    };
    (t.policy.clone(), registry, core.route_broker_for(risk), child_scope)
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
        let allowed = target.allowed_tools.is_empty() || switchboard_config::listed(&target.allowed_tools, name);
        let excluded = switchboard_config::listed(&target.excluded_tools, name);
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
