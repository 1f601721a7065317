//! `agents_list`: which agents `sessions_spawn` may run as.

use crate::policy::Effect;
use crate::tools::{Tool, ToolContext, ToolResult};
use async_trait::async_trait;
use serde_json::{Value, json};

/// `agents_list`: the agents a child session may run as.
pub struct AgentsList;

#[async_trait]
impl Tool for AgentsList {
    fn name(&self) -> &'static str {
        "agents_list"
    }
    fn description(&self) -> String {
        "List the agents sessions_spawn may start a child session of.".into()
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }
    fn effect(&self, _args: &Value) -> Effect {
        Effect::Read
    }
    async fn execute(&self, _args: Value, ctx: &ToolContext) -> ToolResult {
        let core = &ctx.core;
        let root = ctx.root_agent();
        let agents: Vec<Value> = super::allowed_agents(&core.config, &root)
            .into_iter()
            .map(|a| {
                let cfg = &core.config.agents[&a];
                json!({"agentId": a, "provider": cfg.model_provider, "riskProfile": cfg.risk_profile})
            })
            .collect();
        ToolResult::ok(json!({ "agents": agents }).to_string())
    }
}
