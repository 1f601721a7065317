//! The approval gate (docs/approvals.md): given the risk profile and what a tool call
//! would do, allow it, ask a person, or refuse it outright.

use super::CommandRisk;
use switchboard_config::{AutonomyLevel, RiskProfile};

/// What a tool call would do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Reads only.
    Read,
    /// Changes something; shell commands carry their classified risk.
    Write(CommandRisk),
}

impl Effect {
    /// The risk (reads are low).
    pub fn risk(self) -> CommandRisk {
        match self {
            Effect::Read => CommandRisk::Low,
            Effect::Write(r) => r,
        }
    }
}

/// What the gate says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateDecision {
    /// Run it.
    Allow,
    /// Ask an approver first.
    Ask,
    /// Never run it, and why.
    Refuse(String),
}

/// Decide for `tool` with `effect` under `profile` (named `profile_name`).
/// `is_shell` marks command execution, to which the command-risk keys apply.
pub fn gate(profile_name: &str, profile: &RiskProfile, tool: &str, effect: Effect, is_shell: bool) -> GateDecision {
    let listed = |list: &[String]| list.iter().any(|t| t == tool);
    if profile.level == AutonomyLevel::ReadOnly && effect != Effect::Read {
        return GateDecision::Refuse(format!(
            "{tool} refused: risk profile '{profile_name}' has level = \"read_only\", which forbids writes and commands; set [risk_profiles.{profile_name}].level = \"supervised\" to allow them with approval"
        ));
    }
    if is_shell && effect.risk() == CommandRisk::High && profile.block_high_risk_commands {
        return GateDecision::Refuse(format!(
            "{tool} refused: high-risk command blocked by [risk_profiles.{profile_name}].block_high_risk_commands = true"
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
            let risk = effect.risk();
            if is_shell
                && (risk == CommandRisk::High
                    || (risk == CommandRisk::Medium && profile.require_approval_for_medium_risk))
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
        assert_eq!(gate("p", &sup, "file_read", Effect::Read, false), GateDecision::Allow);
        assert_eq!(
            gate("p", &sup, "memory_store", Effect::Write(CommandRisk::Low), false),
            GateDecision::Ask
        );
        assert_eq!(
            gate("p", &sup, "shell", Effect::Write(CommandRisk::Low), true),
            GateDecision::Allow
        );
        assert_eq!(
            gate("p", &sup, "shell", Effect::Write(CommandRisk::Medium), true),
            GateDecision::Ask
        );
        assert!(matches!(
            gate("p", &sup, "shell", Effect::Write(CommandRisk::High), true),
            GateDecision::Refuse(_)
        ));
        let full = profile(AutonomyLevel::Full);
        assert_eq!(
            gate("p", &full, "shell", Effect::Write(CommandRisk::Medium), true),
            GateDecision::Allow
        );
        assert_eq!(
            gate("p", &full, "file_write", Effect::Write(CommandRisk::Medium), false),
            GateDecision::Ask
        );
        let ro = profile(AutonomyLevel::ReadOnly);
        assert!(
            matches!(gate("p", &ro, "file_write", Effect::Write(CommandRisk::Medium), false), GateDecision::Refuse(m) if m.contains("read_only"))
        );
        assert_eq!(gate("p", &ro, "file_read", Effect::Read, false), GateDecision::Allow);
    }
}
