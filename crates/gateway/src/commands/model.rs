//! `/model [name]`: which model this conversation uses, and switching it
//! among the providers its agent may use (`agents.<a>.models`). The choice
//! is kept with the conversation, across restarts and `/new`, until
//! `/model` again.

use super::CommandContext;

pub(super) async fn apply(ctx: &CommandContext<'_>, name: Option<&str>) -> String {
    let config = ctx.runtime.config();
    let Some(agent) = config.agents.get(ctx.agent) else {
        return format!("Agent {} is not configured.", ctx.agent);
    };
    let choices = agent.model_choices();
    let describe = |p: &str| {
        let model = config.providers.get(p).map_or("?", |c| c.model.as_str());
        format!("{p} ({model})")
    };
    let listed = choices.iter().map(|p| describe(p)).collect::<Vec<_>>().join(", ");
    let Some(name) = name else {
        let now = ctx
            .runtime
            .provider_of(ctx.agent, ctx.session_key)
            .await
            .unwrap_or_else(|_| agent.model_provider.clone());
        return format!(
            "This conversation uses {}.\nAvailable: {listed}. Switch with /model <name>.",
            describe(&now)
        );
    };
    if !choices.contains(&name) {
        return format!(
            "'{name}' is not a model {} may use here. Available: {listed}.",
            ctx.agent
        );
    }
    let sessions = ctx.runtime.store().sessions();
    let a = ctx.address;
    // The conversation may not have a turn yet: its row is made here.
    let saved = async {
        sessions
            .ensure(
                ctx.session_key,
                ctx.agent,
                Some(&a.channel),
                Some(&a.chat),
                a.thread.as_deref(),
            )
            .await?;
        let choice = (name != agent.model_provider).then_some(name);
        sessions.set_model_override(ctx.session_key, choice).await
    };
    if let Err(e) = saved.await {
        tracing::error!(error = %e, "cannot save a /model choice");
        return "The choice could not be saved right now; try again.".into();
    }
    tracing::info!(session = %ctx.session_key, provider = name, by = %ctx.sender, "conversation model switched");
    format!("This conversation now uses {} from the next message.", describe(name))
}
