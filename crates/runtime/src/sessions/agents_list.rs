//! `agents_list`: which agents `sessions_spawn` may run as.

use crate::tools::{ToolContext, ToolResult, builtin_tool};
use serde_json::{Value, json};

/// `agents_list`: the agents a child session may run as.
pub struct AgentsList;

builtin_tool!(AgentsList, "agents_list");

impl AgentsList {
    async fn run(&self, _: serde::de::IgnoredAny, ctx: &ToolContext) -> ToolResult {
        let core = &crate::core::runtime_of!(ctx);
        let root = ctx.root_agent();
        let agents: Vec<Value> = super::allowed_agents(&core.config(), &root)
            .into_iter()
            .map(|a| {
                let cfg = &core.config().agents[&a];
                json!({"agentId": a, "provider": cfg.model_provider, "riskProfile": cfg.risk_profile})
            })
            .collect();
        ToolResult::ok(json!({ "agents": agents }).to_string())
    }
}
