//! The approval gate (docs/approvals.md): given the risk profile and what a tool call
//! would do, allow it, ask a person, or refuse it outright.

use super::Risk;
use switchboard_config::{AutonomyLevel, RiskProfile};

/// What the gate says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateDecision {
    /// Run it.
    Allow,
    /// Ask an approver first.
    Ask,
    /// Never run it, and why.
    Refuse(Refusal),
}

/// Why a call is refused, split by audience: the model is told what was
/// refused and not to retry it; the setting that would allow it is for the
/// operators only (a model would repeat it to the person).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// What the model is told.
    pub said: String,
    /// The change that would allow it, for the log and the approvers.
    pub fix: String,
}

impl Refusal {
    /// `said` to the model, `fix` to the operators.
    pub fn new(said: String, fix: String) -> Self {
        Self { said, fix }
    }
}

/// How the gate weighs a tool's risk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rated {
    /// Not at all: the profile's tool lists decide.
    No,
    /// A command: the command-risk keys apply.
    Command,
    /// By its configured risk (MCP tools): auto-approval covers low risk,
    /// medium risk unless `require_approval_for_medium_risk`, never high.
    ByRisk,
}

/// Decide for `tool`, whose call has the risk `effect`, under `profile` (named `profile_name`).
pub fn gate(profile_name: &str, profile: &RiskProfile, tool: &str, effect: Risk, rated: Rated) -> GateDecision {
    let is_shell = rated == Rated::Command;
    let listed = |list: &[String]| switchboard_config::listed(list, tool);
    if profile.level == AutonomyLevel::ReadOnly && effect != Risk::Read {
        return GateDecision::Refuse(Refusal::new(
            format!(
                "{tool} refused: this agent may only read (its risk profile is read-only), so writes and commands are not possible. Do not retry; tell the user."
            ),
            format!(
                "set [risk_profiles.{profile_name}].level = \"supervised\" to allow writes and commands with approval"
            ),
        ));
    }
    if is_shell && effect.at_least_low() == Risk::High && profile.block_high_risk_commands {
        return GateDecision::Refuse(Refusal::new(
            format!(
                "{tool} refused: high-risk commands are blocked for this agent. Do not retry it or try to get the same effect another way; tell the user."
            ),
            format!(
                "set [risk_profiles.{profile_name}].block_high_risk_commands = false to have high-risk commands asked for instead"
            ),
        ));
    }
    if listed(&profile.always_ask) {
        return GateDecision::Ask;
    }
    match profile.level {
        AutonomyLevel::Full => GateDecision::Allow,
        AutonomyLevel::ReadOnly => GateDecision::Allow,
        AutonomyLevel::Supervised => {
            if !listed(&profile.auto_approve) {
                return GateDecision::Ask;
            }
            let risk = effect.at_least_low();
            if rated != Rated::No
                && (risk == Risk::High || (risk == Risk::Medium && profile.require_approval_for_medium_risk))
            {
                GateDecision::Ask
            } else {
                GateDecision::Allow
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(level: AutonomyLevel) -> RiskProfile {
        RiskProfile {
            level,
            auto_approve: vec!["file_read".into(), "shell".into()],
            always_ask: vec!["file_write".into()],
            ..RiskProfile::default()
        }
    }

    #[test]
    fn levels() {
        let sup = profile(AutonomyLevel::Supervised);
        assert_eq!(gate("p", &sup, "file_read", Risk::Read, Rated::No), GateDecision::Allow);
        assert_eq!(gate("p", &sup, "memory_store", Risk::Low, Rated::No), GateDecision::Ask);
        assert_eq!(gate("p", &sup, "shell", Risk::Low, Rated::Command), GateDecision::Allow);
        assert_eq!(
            gate("p", &sup, "shell", Risk::Medium, Rated::Command),
            GateDecision::Ask
        );
        assert!(matches!(
            gate("p", &sup, "shell", Risk::High, Rated::Command),
            GateDecision::Refuse(_)
        ));
        let full = profile(AutonomyLevel::Full);
        assert_eq!(
            gate("p", &full, "shell", Risk::Medium, Rated::Command),
            GateDecision::Allow
        );
        assert_eq!(
            gate("p", &full, "file_write", Risk::Medium, Rated::No),
            GateDecision::Ask
        );
        let ro = profile(AutonomyLevel::ReadOnly);
        assert!(
            matches!(gate("p", &ro, "file_write", Risk::Medium, Rated::No), GateDecision::Refuse(m) if m.said.contains("read-only") && m.fix.contains("level"))
        );
        assert_eq!(gate("p", &ro, "file_read", Risk::Read, Rated::No), GateDecision::Allow);
    }

    #[test]
    fn mcp_tools_are_weighed_by_their_risk_and_never_blocked_as_commands() {
        let mut sup = profile(AutonomyLevel::Supervised);
        sup.auto_approve = vec!["t.*".into()];
        let at = |risk| gate("p", &sup, "t.x", risk, Rated::ByRisk);
        assert_eq!(at(Risk::Low), GateDecision::Allow);
        assert_eq!(at(Risk::Medium), GateDecision::Ask);
        assert_eq!(at(Risk::High), GateDecision::Ask);
        assert_eq!(gate("p", &sup, "t.x", Risk::Read, Rated::ByRisk), GateDecision::Allow);
        let plain = profile(AutonomyLevel::Supervised);
        assert_eq!(gate("p", &plain, "t.x", Risk::Read, Rated::ByRisk), GateDecision::Ask);
    }
}
