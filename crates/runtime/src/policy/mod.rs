//! Security policy: what an agent's tools may touch, how risky a command
//! is, and how many actions an agent may take per hour.

mod command_risk;
mod escalation;
mod gate;
mod git_rules;
mod launchers;
mod paths;
mod tracker;

pub use command_risk::{classify_command, is_dangerous_for_child};
pub use escalation::{EscalationViolation, SubAgentOverrides};
pub use gate::{GateDecision, Rated, Refusal, gate};
pub(crate) use git_rules::refusal as git_refusal;
pub use paths::{PathError, resolve_in_workspace};
pub use switchboard_core::Risk;
pub use tracker::ActionTracker;

use std::path::PathBuf;
use std::sync::Arc;
use switchboard_config::{AutonomyLevel, RiskProfile};

/// The policy an agent's tools run under. Shared (`Arc`) between an agent
/// and its same-identity subagents so budgets are shared too.
#[derive(Debug)]
pub struct SecurityPolicy {
    /// The risk profile's name.
    pub profile_name: String,
    /// The risk profile.
    pub profile: RiskProfile,
    /// Its autonomy level.
    pub level: AutonomyLevel,
    /// The agent's workspace; file tools and shell stay inside it.
    pub workspace: PathBuf,
    /// Paths must stay inside the workspace.
    pub workspace_only: bool,
    /// Paths tools may never touch.
    pub forbidden_paths: Vec<String>,
    /// How long one command may run.
    pub shell_timeout_secs: u64,
    /// The hourly action budget.
    pub tracker: Arc<ActionTracker>,
    /// A narrower hourly cap on the shared tracker (subagent overrides).
    pub hourly_cap: Option<u32>,
}

/// Places no agent reads or writes, even inside a workspace symlinked there.
pub const DEFAULT_FORBIDDEN_PATHS: &[&str] = &[
    "/etc", "/root", "/proc", "/sys", "/dev", "/boot", "~/.ssh", "~/.gnupg", "~/.aws",
];

impl SecurityPolicy {
    /// The policy of `profile` for an agent working in `workspace`.
    pub fn new(profile_name: &str, profile: &RiskProfile, workspace: PathBuf, max_actions_per_hour: u32) -> Self {
        Self {
            profile_name: profile_name.to_string(),
            level: profile.level,
            profile: profile.clone(),
            workspace,
            workspace_only: true,
            forbidden_paths: DEFAULT_FORBIDDEN_PATHS
                .iter()
                .map(std::string::ToString::to_string)
                .collect(),
            shell_timeout_secs: 60,
            tracker: Arc::new(ActionTracker::new(max_actions_per_hour)),
            hourly_cap: None,
        }
    }

    /// Whether `program` (a basename) is in `allowed_commands`.
    pub fn allows_command(&self, program: &str) -> bool {
        self.profile.allowed_commands.iter().any(|c| c == program)
    }
}

impl SecurityPolicy {
    /// The same policy and shared action tracker, working in `workspace`.
    pub fn with_workspace(&self, workspace: PathBuf) -> Self {
        Self {
            profile_name: self.profile_name.clone(),
            profile: self.profile.clone(),
            level: self.level,
            workspace,
            workspace_only: self.workspace_only,
            forbidden_paths: self.forbidden_paths.clone(),
            shell_timeout_secs: self.shell_timeout_secs,
            tracker: self.tracker.clone(),
            hourly_cap: self.hourly_cap,
        }
    }
}

/// Contract 3: the risk profile does not offer `spawn_subagent`.
pub fn spawn_refused_by_profile(parent_alias: &str) -> String {
    format!(
        "spawn_subagent: refused — agent '{parent_alias}' risk_profile does not list spawn_subagent in allowed_tools"
    )
}
