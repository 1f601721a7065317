//! `/compact [focus]`: summarise this conversation now into a note that
//! stands in for it (the last exchange stays as it was; docs/conversations.md).

use super::CommandContext;

pub(super) async fn apply(ctx: &CommandContext<'_>, focus: Option<&str>) -> String {
    match ctx.runtime.compact(ctx.agent, ctx.session_key, focus).await {
        Ok(Some(done)) => format!(
            "Compacted {} earlier messages (~{} tokens) into a summary of ~{} tokens; the last exchange stays as it was.",
            done.replaced, done.tokens_before, done.tokens_after
        ),
        Ok(None) => "Nothing to compact yet: there is no exchange before the last one.".into(),
        Err(e) => {
            tracing::warn!(error = %e, "compaction on demand failed");
            format!("Could not compact this conversation ({e}); nothing was changed.")
        }
    }
}
