//! `/subagents send <id|#> <message>`: add a user message to a running
//! child (it sees it at its next step), or start a new turn in a finished
//! one and answer with its reply.

use super::{CommandContext, resolve};
use switchboard_runtime::{NoApprover, TurnRequest};

pub async fn apply(ctx: &CommandContext<'_>, target: &str, message: &str) -> String {
    let r = match resolve(ctx, target).await {
        Ok(r) => r,
        Err(e) => return e,
    };
    let short = &r.id[..8.min(r.id.len())];
    let note = format!("Message from {} in the chat: {message}", ctx.sender);
    if r.status == "running" {
        ctx.runtime.core().post_to_inbox(&r.session_key, note);
        return format!("Sent to {short} (running); it sees the message at its next step.");
    }
    if ctx.runtime.config().agents.get(&r.agent).is_none_or(|a| !a.enabled) {
        return format!("Run {short}'s agent '{}' is no longer enabled.", r.agent);
    }
    let reply = ctx
        .runtime
        .run_turn(TurnRequest {
            agent: r.agent.clone(),
            session_key: r.session_key.clone(),
            origin: Some(ctx.address.clone()),
            sender: Some(ctx.sender.to_string()),
            text: note,
            broker: std::sync::Arc::new(NoApprover(
                "a follow-up turn of a finished child has no operator".into(),
            )),
            cancel: Default::default(),
            events: None,
        })
        .await;
    match reply {
        Ok(r2) => format!("{} (session of {short})> {}", r.agent, r2.text),
        Err(e) => format!("The follow-up turn in {short} failed: {e}"),
    }
}
