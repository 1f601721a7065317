//! `[runtime_profiles.<name>]`: how long and how far an agent's turns run.

use serde::{Deserialize, Serialize};

/// `[runtime_profiles.<name>]`: loop limits and timeouts.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(default)]
pub struct RuntimeProfile {
    /// Offer tools at all (default true).
    pub agentic: bool,
    /// Rounds of tool calls per turn; past them the model must answer (default 10).
    pub max_tool_iterations: u32,
    /// One budget of tool iterations shared by a turn and all its children (default none).
    pub max_execution_tree_iterations: Option<u32>,
    /// How deep `delegate` may nest (default 3).
    pub max_delegation_depth: u32,
    /// A foreground delegate's time limit (default 120).
    pub delegation_timeout_secs: u64,
    /// An agentic child's time limit (default 300).
    pub agentic_timeout_secs: u64,
    /// Run the tool calls of one answer side by side (default true).
    pub parallel_tools: bool,
    /// Tool executions per hour (default 100).
    pub max_actions_per_hour: u32,
    /// 0 = inherit the global `[cost]` limit.
    pub max_cost_per_day_cents: u64,
}

impl Default for RuntimeProfile {
    fn default() -> Self {
        Self {
            agentic: true,
            max_tool_iterations: 10,
            max_execution_tree_iterations: None,
            max_delegation_depth: 3,
            delegation_timeout_secs: 120,
            agentic_timeout_secs: 300,
            parallel_tools: true,
            max_actions_per_hour: 100,
            max_cost_per_day_cents: 0,
        }
    }
}
