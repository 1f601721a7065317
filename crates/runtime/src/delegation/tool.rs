//! The `delegate` tool: schema, argument parsing and action dispatch.

use super::args::Args;
use super::{child, manage, parallel, run};
use crate::tools::{Tool, ToolContext, ToolResult};
use async_trait::async_trait;
use serde_json::Value;
use switchboard_config::DelegationMode;

/// `delegate`: it delegates for the run's agent. Each run is offered it
/// with a schema naming the agents its agent reaches (`Rules::bind`).
pub struct DelegateTool;

const MISSING_PROMPT: &str = "Missing or empty 'prompt' parameter";

#[async_trait]
impl Tool for DelegateTool {
    fn name(&self) -> &'static str {
        "delegate"
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> ToolResult {
        let args: Args = crate::tools::tool_args!(self, args);
        let core = &crate::core::runtime_of!(ctx);
        let caller = ctx.agent.as_str();
        let action = args.action.clone().unwrap_or_else(|| "delegate".into());
        if !matches!(
            action.as_str(),
            "delegate" | "check_result" | "list_results" | "cancel_task" | "await_sessions"
        ) {
            return ToolResult::fail(format!(
                "Unknown action '{action}'. Use delegate/check_result/list_results/cancel_task/await_sessions."
            ));
        }
        if ctx.scope.delegate_only && action != "delegate" {
            return ToolResult::fail(format!(
                "{action} is not available inside a delegated run: task management belongs to the agent that started the task; pass the task_id up to it"
            ));
        }
        let asker = manage::Caller {
            agent: caller,
            session: &ctx.session_key,
        };
        match action.as_str() {
            "check_result" => return manage::check_result(core, asker, &args).await,
            "list_results" => return manage::list_results(core, asker).await,
            "cancel_task" => return manage::cancel_task(core, asker, &args).await,
            "await_sessions" => return manage::await_sessions(core, asker, &args, &ctx.cancel).await,
            _ => {}
        }
        // One snapshot of the rules for the whole call (a reload may
        // replace them meanwhile), in which the caller is looked up once.
        let rules = core.rules();
        // Gate 1: the caller's delegation policy (a caller a reload
        // removed has none).
        let found = rules.agent(caller);
        let allowed = found.filter(|c| {
            c.risk
                .as_ref()
                .is_some_and(|p| p.delegation_policy.mode == DelegationMode::Allow)
        });
        let Some(caller_rules) = allowed else {
            let caller_profile = found.map(|c| c.config.risk_profile.as_str()).unwrap_or_default();
            return ToolResult::fail(format!(
                "delegation is forbidden for caller \"{caller}\" by risk profile \"{caller_profile}\" delegation_policy; set [risk_profiles.{caller_profile}].delegation_policy mode = \"allow\""
            ));
        };
        if let Some(refused) = core.spawning_paused(ctx) {
            return refused;
        }
        let Some(message) = args.message() else {
            return ToolResult::fail(MISSING_PROMPT);
        };
        if !args.parallel.is_empty() {
            return parallel::run(core, &rules, ctx, caller_rules, &args.parallel, &message).await;
        }
        let Some(target) = args.agent.as_deref().map(str::trim).filter(|a| !a.is_empty()) else {
            return ToolResult::fail("Missing 'agent' parameter: name the agent to delegate to");
        };
        let plan = match child::plan(core, &rules, ctx, caller_rules, target) {
            Ok(p) => p,
            Err(e) => return ToolResult::fail(e),
        };
        if args.background {
            run::start_background(core, ctx, plan, &message).await
        } else {
            run::run_foreground(core, ctx, plan, &message).await
        }
    }
}
