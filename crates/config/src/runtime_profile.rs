//! `[runtime_profiles.<name>]`: how long and how far an agent's turns run.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuntimeProfile {
    #[serde(default = "crate::agent::yes")]
    pub agentic: bool,
    #[serde(default = "ten")]
    pub max_tool_iterations: u32,
    #[serde(default)]
    pub max_execution_tree_iterations: Option<u32>,
    #[serde(default = "three")]
    pub max_delegation_depth: u32,
    #[serde(default = "one_twenty")]
    pub delegation_timeout_secs: u64,
    #[serde(default = "three_hundred")]
    pub agentic_timeout_secs: u64,
    #[serde(default = "crate::agent::yes")]
    pub parallel_tools: bool,
    #[serde(default = "hundred")]
    pub max_actions_per_hour: u32,
    /// 0 = inherit the global `[cost]` limit.
    #[serde(default)]
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

fn ten() -> u32 {
    10
}
fn three() -> u32 {
    3
}
fn one_twenty() -> u64 {
    120
}
fn three_hundred() -> u64 {
    300
}
fn hundred() -> u32 {
    100
}
