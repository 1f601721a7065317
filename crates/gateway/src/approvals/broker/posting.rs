//! Posting a prompt into the approver channel: a channel that fails for a
//! moment (a 502, a rate limit) is tried again a few times before the
//! request is closed as unavailable and the tool refused.

use super::RouteBroker;
use std::time::Duration;
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
        let mut tries = 1;
        loop {
            let Some(ch) = self.channels.get(&address.channel) else {
                return Err(ChannelError::Permanent("channel vanished".into()));
            };
            let wait = match ch.send_approval_prompt(address, prompt).await {
                Err(ChannelError::RateLimited(secs)) if tries < TRIES => Duration::from_secs(secs.clamp(1, 30)),
                Err(ChannelError::Transient(e)) if tries < TRIES => {
                    tracing::warn!(approval = %prompt.id, error = %e, "the approval prompt was not posted; trying again");
                    Duration::from_secs(1 << tries)
                }
                sent => return sent,
            };
            tokio::time::sleep(wait).await;
            tries += 1;
        }
    }
}
