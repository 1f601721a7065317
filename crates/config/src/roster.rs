//! Who an agent can delegate to (docs/delegation.md), and the exact
//! refusals when it cannot.

use crate::{Config, DelegateMode};

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
    pub fn check_reachable(&self, caller: &str, target: &str) -> Result<DelegateMode, String> {
        let c = &self.agents[caller];
        let t = &self.agents[target];
        if !t.enabled {
            return Err(format!(
                "delegate target \"{target}\" is not reachable from \"{caller}\": the target agent is disabled"
            ));
        }
        if let Some(entry) = c.delegates.iter().find(|d| d.agent() == target) {
            return Ok(entry.mode());
        }
        if c.delegate_same_risk_profile {
            if t.risk_profile == c.risk_profile && target != caller {
                return Ok(DelegateMode::Bounded);
            }
            return Err(format!(
                "delegate target \"{target}\" is not reachable from \"{caller}\": different risk profile (caller uses \"{cp}\", target uses \"{tp}\"). delegate_same_risk_profile only reaches agents with the same risk profile; add an explicit [agents.{caller}].delegates entry with the intended mode, or change one agent's risk_profile.",
                cp = c.risk_profile,
                tp = t.risk_profile
            ));
        }
        Err(format!(
            "delegate target \"{target}\" is not reachable from \"{caller}\": delegate_same_risk_profile is disabled and the target is not listed in [agents.{caller}].delegates"
        ))
    }
}
