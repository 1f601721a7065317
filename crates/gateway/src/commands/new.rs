//! `/new`: a fresh conversation in this chat. The transcript so far stays
//! in the store; the agent just no longer sees it.

use super::CommandContext;

pub(super) async fn apply(ctx: &CommandContext<'_>) -> String {
    match ctx.runtime.store().sessions().reset(ctx.session_key).await {
        Ok(()) => "Started a fresh conversation.".into(),
        Err(e) => {
            tracing::error!(error = %e, "reset_session failed");
            "Could not start a fresh conversation (storage error); nothing was changed.".into()
        }
    }
}
