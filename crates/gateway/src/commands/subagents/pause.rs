//! `/subagents pause` and `resume`: refuse new spawns and delegations while
//! paused; running children continue. Needs an approver.

use super::CommandContext;

pub(super) async fn apply(ctx: &CommandContext<'_>, pause: bool) -> String {
    if !ctx.sender_may_operate() {
        return format!(
            "{} may not pause or resume delegation: only an approver may.",
            ctx.sender
        );
    }
    set_paused(ctx.runtime, pause).await
}

/// Pause or resume spawning for every gateway; what to tell the person.
pub(crate) async fn set_paused(runtime: &switchboard_runtime::Runtime, pause: bool) -> String {
    // Every gateway sharing the control plane follows the flag (this one
    // too: it is written first, so its own watcher never reads it stale).
    let store = runtime.store();
    if let Err(e) = store.set_flag("paused", if pause { "1" } else { "0" }).await {
        tracing::error!(error = %e, "cannot share the pause with the other gateways");
    }
    runtime.core().live().set_paused(pause);
    store.signal().await;
    if pause {
        "Delegation spawning is paused: new spawns and delegations are refused; running children continue. /subagents resume lifts it.".into()
    } else {
        "Delegation spawning resumed.".into()
    }
}
