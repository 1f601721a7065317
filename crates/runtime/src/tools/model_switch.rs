//! `model_switch`: move this session to another configured provider.

use super::{Tool, ToolContext, ToolResult, tool_args};
use crate::policy::{CommandRisk, Effect};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

pub(crate) struct ModelSwitch;

#[derive(Deserialize)]
struct Args {
    provider: String,
}

#[async_trait]
impl Tool for ModelSwitch {
    fn name(&self) -> &'static str {
        "model_switch"
    }
    fn description(&self) -> String {
        "Switch this conversation to another configured model provider (by provider name).".into()
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"provider": {"type": "string"}}, "required": ["provider"]})
    }
    fn effect(&self, _args: &Value) -> Effect {
        Effect::Write(CommandRisk::Low)
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> ToolResult {
        let args: Args = tool_args!(self, args);
        if !ctx.providers.contains(&args.provider) {
            return ToolResult::fail(format!(
                "unknown provider '{}'; configured providers: {}",
                args.provider,
                ctx.providers.join(", ")
            ));
        }
        if let Err(e) = ctx
            .store
            .set_model_override(&ctx.session_key, Some(&args.provider))
            .await
        {
            tracing::error!(error = %e, "model_switch failed");
            return ToolResult::fail("the switch could not be saved (storage error)");
        }
        *ctx.switch_to.lock() = Some(args.provider.clone());
        ToolResult::ok(format!(
            "switched to provider '{}' from the next model call on",
            args.provider
        ))
    }
}
