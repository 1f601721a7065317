//! Who an agent can delegate to (docs/delegation.md), and the exact
//! refusals when it cannot.

use crate::{Config, DelegateMode};

/// Why an agent cannot delegate to another (the words are a contract:
/// docs/delegation.md).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Unreachable {
    /// The target is disabled.
    #[error("delegate target \"{target}\" is not reachable from \"{caller}\": the target agent is disabled")]
    Disabled {
        /// Who asked.
        caller: String,
        /// Whom.
        target: String,
    },
    /// Reaching same-profile peers only, and the target's profile differs.
    #[error(
        "delegate target \"{target}\" is not reachable from \"{caller}\": different risk profile (caller uses \"{caller_profile}\", target uses \"{target_profile}\"). delegate_same_risk_profile only reaches agents with the same risk profile; add an explicit [agents.{caller}].delegates entry with the intended mode, or change one agent's risk_profile."
    )]
    OtherProfile {
        /// Who asked.
        caller: String,
        /// Whom.
        target: String,
        /// The caller's risk profile.
        caller_profile: String,
        /// The target's.
        target_profile: String,
    },
    /// Not reaching same-profile peers, and the target is not listed.
    #[error(
        "delegate target \"{target}\" is not reachable from \"{caller}\": delegate_same_risk_profile is disabled and the target is not listed in [agents.{caller}].delegates"
    )]
    NotListed {
        /// Who asked.
        caller: String,
        /// Whom.
        target: String,
    },
}

impl Config {
    /// The reachable set of `caller`, sorted by alias: same-risk-profile peers
    /// (while `delegate_same_risk_profile`) and explicit `delegates`, minus the
    /// caller and disabled agents. Explicit entries decide the mode.
    pub fn reachable(&self, caller: &str) -> Vec<(String, DelegateMode)> {
        let Some(c) = self.agents.get(caller) else {
            return Vec::new();
        };
        let mut out: Vec<(String, DelegateMode)> = Vec::new();
        for (alias, a) in &self.agents {
            if alias == caller || !a.enabled {
                continue;
            }
            if let Some(entry) = c.delegates.iter().find(|d| d.agent() == alias) {
                out.push((alias.clone(), entry.mode()));
            } else if c.delegate_same_risk_profile && a.risk_profile == c.risk_profile {
                out.push((alias.clone(), DelegateMode::Bounded));
            }
        }
        out
    }

    /// Whether `caller` may reach `target` (which exists), and in which mode.
    pub fn check_reachable(&self, caller: &str, target: &str) -> Result<DelegateMode, Unreachable> {
        let c = &self.agents[caller];
        let t = &self.agents[target];
        let (caller, target) = (caller.to_string(), target.to_string());
        if !t.enabled {
            return Err(Unreachable::Disabled { caller, target });
        }
        if let Some(entry) = c.delegates.iter().find(|d| d.agent() == target) {
            return Ok(entry.mode());
        }
        if !c.delegate_same_risk_profile {
            return Err(Unreachable::NotListed { caller, target });
        }
        if t.risk_profile == c.risk_profile && target != caller {
            return Ok(DelegateMode::Bounded);
        }
        Err(Unreachable::OtherProfile {
            caller,
            target,
            caller_profile: c.risk_profile.clone(),
            target_profile: t.risk_profile.clone(),
        })
    }
}
