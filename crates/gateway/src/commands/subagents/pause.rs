//! `/subagents pause [all]` and `resume [all]`: refuse new spawns and
//! delegations in this chat's agent's runs (or every agent's), across
//! every gateway; running children continue. Needs an operator of that
//! agent (of every agent for `all`; see `rights`).

use super::CommandContext;
use crate::rights::{PauseScope, may_pause};

pub(super) async fn apply(ctx: &CommandContext<'_>, pause: bool, all: bool) -> String {
    let scope = if all {
        PauseScope::All
    } else {
        PauseScope::Agent(ctx.agent)
    };
    if !may_pause(&ctx.runtime.config(), ctx.sender, scope) {
        return match scope {
            PauseScope::All => format!(
                "{} may not pause or resume delegation for every agent: only an approver of every agent may.",
                ctx.sender
            ),
            PauseScope::Agent(a) => format!(
                "{} may not pause or resume delegation for {a}: only an approver of {a} may.",
                ctx.sender
            ),
        };
    }
    set_paused(ctx.runtime, scope, pause).await
}

/// The cluster flag that holds a pause: `paused` for every agent,
/// `paused:<agent>` for one.
pub(crate) fn flag(agent: Option<&str>) -> String {
    agent.map_or_else(|| "paused".to_string(), |a| format!("paused:{a}"))
}

/// Pause or resume spawning for `scope` on every gateway; what to tell the person.
pub(crate) async fn set_paused(runtime: &switchboard_runtime::Runtime, scope: PauseScope<'_>, pause: bool) -> String {
    let agent = match scope {
        PauseScope::Agent(a) => Some(a),
        PauseScope::All => None,
    };
    // Every gateway sharing the control plane follows the flag (this one
    // too: it is written first, so its own watcher never reads it stale).
    let store = runtime.store();
    if let Err(e) = store.mail().set_flag(&flag(agent), if pause { "1" } else { "0" }).await {
        // Not recorded, the other gateways (and this one's watcher) would
        // undo it: say so rather than pretend.
        tracing::error!(error = %e, "cannot share the pause with the other gateways");
        return "The pause could not be recorded in the control plane; nothing changed. Try again.".into();
    }
    runtime.core().live().set_paused(agent, pause);
    store.signal().await;
    let whose = agent.map_or_else(|| "every agent".to_string(), str::to_string);
    if pause {
        let resume = if agent.is_some() {
            "/subagents resume"
        } else {
            "/subagents resume all"
        };
        format!(
            "Delegation spawning is paused for {whose}: new spawns and delegations are refused; running children continue. {resume} lifts it."
        )
    } else if agent.is_some() && runtime.core().live().is_paused_everywhere() {
        format!(
            "The pause of {whose} alone is lifted, but spawning stays paused for every agent: /subagents resume all lifts that."
        )
    } else {
        format!("Delegation spawning resumed for {whose}.")
    }
}
