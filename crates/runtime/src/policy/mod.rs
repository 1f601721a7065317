//! Security policy: what an agent's tools may touch, how risky a command
//! is, and how many actions an agent may take per hour.

mod command_risk;
mod gate;
mod paths;
mod tracker;

pub use command_risk::{CommandRisk, classify_command, is_dangerous_for_child};
pub use gate::{Effect, GateDecision, gate};
pub use paths::{PathError, resolve_in_workspace};
pub use tracker::ActionTracker;

use std::path::PathBuf;
use std::sync::Arc;
use switchboard_config::{AutonomyLevel, RiskProfile};

/// The policy an agent's tools run under. Shared (`Arc`) between an agent
/// and its same-identity subagents so budgets are shared too.
#[derive(Debug)]
pub struct SecurityPolicy {
    pub profile_name: String,
    pub profile: RiskProfile,
    pub level: AutonomyLevel,
    /// The agent's workspace; file tools and shell stay inside it.
    pub workspace: PathBuf,
    pub workspace_only: bool,
    pub forbidden_paths: Vec<String>,
    pub shell_timeout_secs: u64,
    pub tracker: Arc<ActionTracker>,
}

/// Places no agent reads or writes, even inside a workspace symlinked there.
pub const DEFAULT_FORBIDDEN_PATHS: &[&str] = &[
    "/etc", "/root", "/proc", "/sys", "/dev", "/boot", "~/.ssh", "~/.gnupg", "~/.aws",
];

impl SecurityPolicy {
    pub fn new(
        profile_name: &str,
        profile: &RiskProfile,
        workspace: PathBuf,
        max_actions_per_hour: u32,
    ) -> Self {
        Self {
            profile_name: profile_name.to_string(),
            level: profile.level,
            profile: profile.clone(),
            workspace,
            workspace_only: true,
            forbidden_paths: DEFAULT_FORBIDDEN_PATHS
                .iter()
                .map(|s| s.to_string())
                .collect(),
            shell_timeout_secs: 60,
            tracker: Arc::new(ActionTracker::new(max_actions_per_hour)),
        }
    }

    /// Whether `program` (a basename) is in `allowed_commands`.
    pub fn allows_command(&self, program: &str) -> bool {
        self.profile.allowed_commands.iter().any(|c| c == program)
    }
}
