//! `/status`: agent, model, session and today's spend.

use super::CommandContext;
use switchboard_store::{now_ms, utc_day};

pub(super) async fn apply(ctx: &CommandContext<'_>) -> String {
    let config = &ctx.runtime.config();
    let provider = ctx
        .runtime
        .provider_of(ctx.agent, ctx.session_key)
        .await
        .unwrap_or_else(|_| "?".into());
    let model = config.providers.get(&provider).map(|p| p.model.as_str()).unwrap_or("?");
    let day = utc_day(now_ms());
    let cost = ctx
        .runtime
        .store()
        .costs()
        .of_agent(ctx.agent, &day)
        .await
        .unwrap_or_default();
    let tools = ctx.runtime.tool_cost(ctx.agent, &provider).await.describe();
    let route = ctx
        .route
        .as_deref()
        .map(|r| format!("\nroute: {r}"))
        .unwrap_or_default();
    format!(
        "agent: {}{route}\nmodel: {provider} ({model})\ntools: {tools}\nsession: {}\ntoday ({day} UTC): {} model calls, {} tokens in / {} out, ${:.4}",
        ctx.agent,
        ctx.session_key,
        cost.calls,
        cost.tokens_in,
        cost.tokens_out,
        cost.cost_micros as f64 / 1e6
    )
}
