//! `/subagents pause` and `resume`: refuse new spawns and delegations while
//! paused; running children continue. Needs an approver.

use super::CommandContext;

pub(super) fn apply(ctx: &CommandContext<'_>, pause: bool) -> String {
    if !ctx.sender_may_operate() {
        return format!(
            "{} may not pause or resume delegation: only an approver may.",
            ctx.sender
        );
    }
    ctx.runtime.core().live().set_paused(pause);
    if pause {
        "Delegation spawning is paused: new spawns and delegations are refused; running children continue. /subagents resume lifts it.".into()
    } else {
        "Delegation spawning resumed.".into()
    }
}
