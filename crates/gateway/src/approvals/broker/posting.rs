//! Posting a prompt into the approver channel: a channel that fails for a
//! moment (a 502, a rate limit) is tried again a few times, as any send
//! (`ChannelSet::retrying`), before the request is closed as unavailable
//! and the tool refused.

use super::RouteBroker;
use switchboard_core::{ApprovalPrompt, ChannelError, ChatAddress, MessageRef};

/// Tries of a prompt before it is given up.
const TRIES: u32 = 4;

impl RouteBroker {
    /// Post `prompt` at `address`.
    pub(super) async fn post_prompt(
        &self,
        address: &ChatAddress,
        prompt: &ApprovalPrompt,
    ) -> Result<MessageRef, ChannelError> {
        self.channels
            .retrying(&address.channel, TRIES, |ch| async move {
                ch.send_approval_prompt(address, prompt).await
            })
            .await
    }
}
