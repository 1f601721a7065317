//! `delegate`: hand work to a DIFFERENT configured agent (docs/delegation.md).
//!
//! Gates run in a fixed order — delegation policy, pause, reachability,
//! depth, target profile — and every refusal is an exact contract string.
//! A child runs bounded (inside the caller's tool ceiling, budgets and
//! workspace, with no operator) or independent (under its own policy, with
//! its own approval route), in the foreground, in parallel, or in the
//! background as a task row in the control plane.

mod background;
mod child;
mod manage;
mod parallel;
mod roster;
mod tool;

pub use roster::{check_reachable, reachable};
pub use tool::DelegateTool;

use crate::core::Core;
use crate::scope::RunScope;
use crate::tools::{BoundTool, ToolRegistry};
use std::sync::Arc;
use switchboard_config::DelegationMode;

/// Replace the registry's `delegate` entry (if the risk filter kept it) with
/// an instance bound to `identity`: its schema lists exactly the agents
/// `identity` can reach.
pub fn bind_delegate_tool(core: &Arc<Core>, identity: &str, registry: ToolRegistry, scope: &RunScope) -> ToolRegistry {
    if registry.get("delegate").is_none() {
        return registry;
    }
    // The bound instance depends only on the configuration, so it (and its
    // schema) is built once per identity and kind of run.
    let key = (identity.to_string(), scope.delegate_only);
    let mut bound = core.delegate_tools.lock();
    let tool = bound
        .entry(key)
        .or_insert_with(|| {
            let allowed = core
                .config
                .risk_profile_of(identity)
                .is_some_and(|p| p.delegation_policy.mode == DelegationMode::Allow);
            let roster = if allowed {
                reachable(&core.config, identity).into_iter().map(|(a, _)| a).collect()
            } else {
                Vec::new()
            };
            BoundTool::new(Arc::new(DelegateTool {
                identity: identity.to_string(),
                roster,
                allowed,
                delegate_only: scope.delegate_only,
            }))
        })
        .clone();
    drop(bound);
    registry.with_bound(tool)
}

/// The `delegate` tool before binding (so the risk filter can see its name).
pub fn unbound() -> DelegateTool {
    DelegateTool {
        identity: String::new(),
        roster: Vec::new(),
        allowed: false,
        delegate_only: false,
    }
}
