//! Notices to a risk profile's approvers that need no decision: what an
//! agent was refused and the setting that would allow it (the model is
//! told only that it was refused; docs/approvals.md, "Refusals").

use crate::channels::ChannelSet;
use switchboard_config::{ApprovalRoute, Config};
use switchboard_core::{ChatAddress, Outbound};

/// Post `text` into `route`'s approver room, if its channel runs here.
/// Best effort: a failure is logged (the log has the text already).
pub(super) async fn tell(config: &Config, channels: &ChannelSet, route: &ApprovalRoute, text: &str) {
    let (Some(channel), Some(recipient)) = (&route.approver_channel, &route.approver_recipient) else {
        return;
    };
    let Some(ch) = channels.get(channel) else {
        tracing::debug!(%channel, "the approver channel does not run here; the notice is in the log only");
        return;
    };
    let chat = config.channels.resolve_room(channel, recipient);
    let out = Outbound::new(ChatAddress::new(channel.clone(), chat), text);
    if let Err(e) = ch.send(&out).await {
        tracing::warn!(%channel, error = %e, "cannot post a notice to the approvers");
    }
}
