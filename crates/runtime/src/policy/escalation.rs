//! `ensure_no_escalation_beyond`: overrides may narrow a child's policy,
//! never widen it. Every field that would grant more than the parent is
//! rejected by name.

use super::SecurityPolicy;
use serde::Deserialize;
use std::path::PathBuf;
use switchboard_config::AutonomyLevel;

/// Narrowing overrides a `spawn_subagent` caller may ask for.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubAgentOverrides {
    /// A different autonomy level.
    pub level: Option<AutonomyLevel>,
    /// Folders outside the workspace it may use.
    pub allowed_roots: Option<Vec<String>>,
    /// Programs it may run.
    pub allowed_commands: Option<Vec<String>>,
    /// Whether paths stay in the workspace.
    pub workspace_only: Option<bool>,
    /// Paths it may never touch.
    pub forbidden_paths: Option<Vec<String>>,
    /// Environment variables passed to commands.
    pub env_passthrough: Option<Vec<String>>,
    /// Its hourly action budget.
    pub max_actions_per_hour: Option<u32>,
    /// Its daily spend cap.
    pub max_cost_per_day_cents: Option<u64>,
    /// How long one command may run.
    pub shell_timeout_secs: Option<u64>,
    /// Whether high-risk commands are refused.
    pub block_high_risk_commands: Option<bool>,
    /// Whether medium-risk commands need approval.
    pub require_approval_for_medium_risk: Option<bool>,
}

/// The field that would grant more than the parent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("override of '{field}' would grant more than the parent ({detail})")]
pub struct EscalationViolation {
    /// The override that asks for more.
    pub field: &'static str,
    /// What it asked for, against what the parent has.
    pub detail: String,
}

fn violation(field: &'static str, detail: impl Into<String>) -> Result<(), EscalationViolation> {
    Err(EscalationViolation {
        field,
        detail: detail.into(),
    })
}

impl SubAgentOverrides {
    /// Reject any field that widens `parent`. `parent_cost_cap_cents` is the
    /// parent's daily cap (0 = inherits the global limit).
    pub fn ensure_no_escalation_beyond(
        &self,
        parent: &SecurityPolicy,
        parent_hourly: u32,
        parent_cost_cap_cents: u64,
    ) -> Result<(), EscalationViolation> {
        if let Some(level) = self.level
            && level > parent.level
        {
            return violation("level", format!("parent is {}", parent.level.as_str()));
        }
        if let Some(roots) = &self.allowed_roots
            && let Some(outside) = roots.iter().find(|r| {
                let p = PathBuf::from(r);
                (p.is_absolute() && !p.starts_with(&parent.workspace)) || r.contains("..")
            })
        {
            return violation(
                "allowed_roots",
                format!("'{outside}' is outside the parent's workspace"),
            );
        }
        if let Some(cmds) = &self.allowed_commands
            && let Some(extra) = cmds.iter().find(|c| !parent.allows_command(c))
        {
            return violation("allowed_commands", format!("'{extra}' is not allowed for the parent"));
        }
        if self.workspace_only == Some(false) && parent.workspace_only {
            return violation("workspace_only", "the parent is confined to its workspace");
        }
        if let Some(paths) = &self.forbidden_paths
            && let Some(dropped) = parent.forbidden_paths.iter().find(|p| !paths.contains(p))
        {
            return violation("forbidden_paths", format!("'{dropped}' is forbidden for the parent"));
        }
        if let Some(env) = &self.env_passthrough
            && !env.is_empty()
        {
            return violation("env_passthrough", "the parent passes no environment variables through");
        }
        if let Some(n) = self.max_actions_per_hour
            && n > parent_hourly
        {
            return violation("max_actions_per_hour", format!("parent allows {parent_hourly}"));
        }
        if let Some(c) = self.max_cost_per_day_cents
            && parent_cost_cap_cents > 0
            && (c == 0 || c > parent_cost_cap_cents)
        {
            return violation(
                "max_cost_per_day_cents",
                format!("parent allows {parent_cost_cap_cents}"),
            );
        }
        if let Some(t) = self.shell_timeout_secs
            && t > parent.shell_timeout_secs
        {
            return violation(
                "shell_timeout_secs",
                format!("parent allows {}s", parent.shell_timeout_secs),
            );
        }
        if self.block_high_risk_commands == Some(false) && parent.profile.block_high_risk_commands {
            return violation("block_high_risk_commands", "the parent blocks high-risk commands");
        }
        if self.require_approval_for_medium_risk == Some(false) && parent.profile.require_approval_for_medium_risk {
            return violation(
                "require_approval_for_medium_risk",
                "the parent requires approval for medium-risk commands",
            );
        }
        Ok(())
    }

    /// The parent's policy narrowed by these overrides, sharing its tracker.
    pub fn apply(&self, parent: &SecurityPolicy) -> SecurityPolicy {
        let mut p = parent.with_workspace(parent.workspace.clone());
        if let Some(level) = self.level {
            p.level = level;
            p.profile.level = level;
        }
        if let Some(cmds) = &self.allowed_commands {
            p.profile.allowed_commands = cmds.clone();
        }
        if let Some(paths) = &self.forbidden_paths {
            p.forbidden_paths = paths.clone();
        }
        if let Some(t) = self.shell_timeout_secs {
            p.shell_timeout_secs = t;
        }
        if let Some(n) = self.max_actions_per_hour {
            p.hourly_cap = Some(n);
        }
        if let Some(b) = self.block_high_risk_commands {
            p.profile.block_high_risk_commands = b;
        }
        if let Some(b) = self.require_approval_for_medium_risk {
            p.profile.require_approval_for_medium_risk = b;
        }
        p
    }
}
