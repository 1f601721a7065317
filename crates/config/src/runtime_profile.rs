//! `[runtime_profiles.<name>]`: how long and how far an agent's turns run.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(default)]
pub struct RuntimeProfile {
    pub agentic: bool,
    pub max_tool_iterations: u32,
    pub max_execution_tree_iterations: Option<u32>,
    pub max_delegation_depth: u32,
    pub delegation_timeout_secs: u64,
    pub agentic_timeout_secs: u64,
    pub parallel_tools: bool,
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
