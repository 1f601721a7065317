//! `/subagents send <id|#> <message>`: add a user message to a running
//! child (it sees it at its next step), or start a new turn in a finished
//! one and answer with its reply. In chats that turn waits in the child
//! session's queue like any other message (the router runs the plan).

use super::{CommandContext, resolve};
use switchboard_runtime::{NoApprover, TurnRequest};
use switchboard_store::RunStatus;

/// What a `/subagents send` does.
pub(crate) enum Plan {
    /// Done already (the message reached a running child) or refused.
    Done(String),
    /// A new turn in a finished child's session: it waits in that
    /// session's queue like any message; its answer starts with `prefix`.
    FollowUp {
        agent: String,
        session_key: String,
        text: String,
        prefix: String,
    },
}

pub(crate) async fn plan(ctx: &CommandContext<'_>, target: &str, message: &str) -> Plan {
    let r = match resolve(ctx, target).await {
        Ok(r) => r,
        Err(e) => return Plan::Done(e),
    };
    let short = &r.id[..8.min(r.id.len())];
    if !crate::rights::may_kill(&ctx.runtime.config(), ctx.sender, &crate::rights::RunOwner::of(&r)) {
        return Plan::Done(format!(
            "{} may not steer run {short}: it was started by {}, and only an approver of its agent may steer someone else's runs.",
            ctx.sender,
            r.requester.as_deref().unwrap_or("someone else")
        ));
    }
    let note = format!("Message from {} in the chat: {message}", ctx.sender);
    let store = ctx.runtime.store();
    if r.status == RunStatus::Running
        && let Some(there) = r.instance_id.as_deref().filter(|i| Some(*i) != store.instance_id())
    {
        // Running on another gateway: it moves the message to the child.
        if let Err(e) = store.mail().send_to_child(there, &r.session_key, &note).await {
            tracing::error!(error = %e, "cannot leave a message for a child on another gateway");
            return Plan::Done(format!("Could not reach {short} on the gateway running it; try again."));
        }
        store.signal().await;
        return Plan::Done(format!(
            "Sent to {short} (running on another gateway); it sees the message at its next step."
        ));
    }
    if r.status == RunStatus::Running {
        ctx.runtime.core().live().leave_note(&r.session_key, note);
        return Plan::Done(format!(
            "Sent to {short} (running); it sees the message at its next step."
        ));
    }
    if ctx.runtime.config().agents.get(&r.agent).is_none_or(|a| !a.enabled) {
        return Plan::Done(format!("Run {short}'s agent '{}' is no longer enabled.", r.agent));
    }
    Plan::FollowUp {
        prefix: format!("{} (session of {short})> ", r.agent),
        agent: r.agent,
        session_key: r.session_key,
        text: note,
    }
}

/// Run the plan here (the terminal chat, which has one person and no
/// session queue of its own).
pub(crate) async fn apply(ctx: &CommandContext<'_>, target: &str, message: &str) -> String {
    let (agent, session_key, text, prefix) = match plan(ctx, target, message).await {
        Plan::Done(text) => return text,
        Plan::FollowUp {
            agent,
            session_key,
            text,
            prefix,
        } => (agent, session_key, text, prefix),
    };
    let reply = ctx
        .runtime
        .run_turn(TurnRequest {
            origin: Some(ctx.address.clone()),
            sender: Some(ctx.sender.to_string()),
            ..TurnRequest::new(
                &agent,
                &session_key,
                &text,
                std::sync::Arc::new(NoApprover(
                    "a follow-up turn of a finished child has no operator".into(),
                )),
            )
        })
        .await;
    match reply {
        Ok(r2) => format!("{prefix}{}", r2.text),
        Err(e) => format!("The follow-up turn failed: {e}"),
    }
}
