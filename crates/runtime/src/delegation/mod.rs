//! `delegate`: hand work to a DIFFERENT configured agent (docs/delegation.md).
//!
//! Gates run in a fixed order — delegation policy, pause, reachability,
//! depth, target profile — and every refusal is an exact contract string.
//! A child runs bounded (inside the caller's tool ceiling, budgets and
//! workspace, with no operator) or independent (under its own policy, with
//! its own approval route), in the foreground, in parallel, or in the
//! background as a task row in the control plane.

mod args;
mod background;
mod child;
mod manage;
mod parallel;
mod roster;
mod run;
mod tool;

pub use roster::{check_reachable, reachable};
pub use tool::DelegateTool;

use crate::core::CoreRef;
use crate::tools::Tool;
use std::sync::Arc;
use switchboard_config::DelegationMode;

impl DelegateTool {
    /// The `delegate` tool before binding (so the risk filter can see its
    /// name); each run gets the version for its identity.
    pub fn unbound(core: CoreRef) -> Self {
        Self {
            core,
            identity: String::new(),
            roster: Vec::new(),
            allowed: false,
            delegate_only: false,
        }
    }

    /// The instance for `identity`: its schema lists exactly the agents
    /// `identity` can reach.
    pub(crate) fn bound_to(&self, identity: &str, delegate_only: bool) -> Option<Arc<dyn Tool>> {
        let core = self.core.upgrade()?;
        let allowed = core
            .config()
            .risk_profile_of(identity)
            .is_some_and(|p| p.delegation_policy.mode == DelegationMode::Allow);
        let roster = if allowed {
            reachable(&core.config(), identity)
                .into_iter()
                .map(|(a, _)| a)
                .collect()
        } else {
            Vec::new()
        };
        Some(Arc::new(DelegateTool {
            core: self.core.clone(),
            identity: identity.to_string(),
            roster,
            allowed,
            delegate_only,
        }))
    }
}
