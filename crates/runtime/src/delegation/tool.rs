//! The `delegate` tool: schema, argument parsing and action dispatch.

use super::args::Args;
use super::{background, child, manage, parallel, run};
use crate::core::CoreRef;
use crate::tools::{Tool, ToolContext, ToolResult};
use async_trait::async_trait;
use serde_json::Value;
use switchboard_config::DelegationMode;

/// A `delegate` instance bound to the identity whose policy and roster it
/// uses.
pub struct DelegateTool {
    /// The runtime (to start children).
    pub core: CoreRef,
    /// The agent the tool delegates for.
    pub identity: String,
    /// The agents it can reach.
    pub roster: Vec<String>,
    /// Whether its profile allows delegation at all.
    pub allowed: bool,
    /// Inside a bounded child: delegation only, no task management.
    pub delegate_only: bool,
}

const MISSING_PROMPT: &str = "Missing or empty 'prompt' parameter";

#[async_trait]
impl Tool for DelegateTool {
    fn name(&self) -> &'static str {
        "delegate"
    }

    fn parameters(&self) -> Value {
        let agent_desc = if self.allowed && !self.roster.is_empty() {
            format!("The agent to delegate to. Reachable agents: {}", self.roster.join(", "))
        } else if self.allowed {
            "The agent to delegate to. No agent is reachable from this one.".to_string()
        } else {
            "The agent to delegate to. Delegation is forbidden by this agent's risk profile.".to_string()
        };
        let mut schema = crate::tools::catalog_parameters(self.name());
        schema["properties"]["agent"]["description"] = Value::String(agent_desc);
        schema
    }

    fn binds_per_identity(&self) -> bool {
        true
    }

    fn for_identity(&self, identity: &str, delegate_only: bool) -> Option<std::sync::Arc<dyn Tool>> {
        self.bound_to(identity, delegate_only)
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> ToolResult {
        let args: Args = crate::tools::tool_args!(self, args);
        let core = match self.core.get() {
            Ok(c) => c,
            Err(e) => return e,
        };
        let action = args.action.clone().unwrap_or_else(|| "delegate".into());
        if !matches!(
            action.as_str(),
            "delegate" | "check_result" | "list_results" | "cancel_task" | "await_sessions"
        ) {
            return ToolResult::fail(format!(
                "Unknown action '{action}'. Use delegate/check_result/list_results/cancel_task/await_sessions."
            ));
        }
        if self.delegate_only && action != "delegate" {
            return ToolResult::fail(format!(
                "{action} is not available inside a delegated run: task management belongs to the agent that started the task; pass the task_id up to it"
            ));
        }
        match action.as_str() {
            "check_result" => return manage::check_result(&core, &self.identity, &args).await,
            "list_results" => return manage::list_results(&core, &self.identity).await,
            "cancel_task" => return manage::cancel_task(&core, &self.identity, &args).await,
            "await_sessions" => return manage::await_sessions(&core, &self.identity, &args, &ctx.cancel).await,
            _ => {}
        }
        // Gate 1: the caller's delegation policy.
        let caller_profile = core
            .config()
            .agents
            .get(&self.identity)
            .map(|a| a.risk_profile.clone())
            .unwrap_or_default();
        let policy_allows = core
            .config()
            .risk_profiles
            .get(&caller_profile)
            .is_some_and(|p| p.delegation_policy.mode == DelegationMode::Allow);
        if !policy_allows {
            return ToolResult::fail(format!(
                "delegation is forbidden for caller \"{caller}\" by risk profile \"{caller_profile}\" delegation_policy; set [risk_profiles.{caller_profile}].delegation_policy mode = \"allow\"",
                caller = self.identity
            ));
        }
        if core.live.is_paused(&ctx.root_agent()) || core.live.is_paused(&ctx.agent) {
            return ToolResult::fail(crate::core::PAUSED);
        }
        let Some(message) = args.message() else {
            return ToolResult::fail(MISSING_PROMPT);
        };
        if !args.parallel.is_empty() {
            return parallel::run(&core, ctx, &self.identity, &args.parallel, &message).await;
        }
        let Some(target) = args.agent.as_deref().map(str::trim).filter(|a| !a.is_empty()) else {
            return ToolResult::fail("Missing 'agent' parameter: name the agent to delegate to");
        };
        let plan = match child::plan(&core, ctx, &self.identity, target) {
            Ok(p) => p,
            Err(e) => return ToolResult::fail(e),
        };
        if args.background {
            background::start(&core, ctx, plan, message).await
        } else {
            run::run_foreground(&core, ctx, plan, &message).await
        }
    }
}
