//! `model_switch`: move this session to another configured provider.

use super::{ToolContext, ToolResult, builtin_tool};
use serde::Deserialize;

pub(crate) struct ModelSwitch;

#[derive(Deserialize)]
struct Args {
    provider: String,
}

builtin_tool!(ModelSwitch, "model_switch", Args);

impl ModelSwitch {
    async fn run(&self, args: Args, ctx: &ToolContext) -> ToolResult {
        if !ctx.providers.contains(&args.provider) {
            return ToolResult::fail(format!(
                "unknown provider '{}'; configured providers: {}",
                args.provider,
                ctx.providers.join(", ")
            ));
        }
        if let Err(e) = ctx
            .store
            .sessions()
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
