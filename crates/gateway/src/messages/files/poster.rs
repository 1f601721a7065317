//! The runtime's `FilePoster`: each chat's channel, its upload limit and
//! upload API; a rate limit or a transient failure is tried again a
//! little, a refusal is reported at once.

use crate::channels::ChannelSet;
use async_trait::async_trait;
use std::time::Duration;
use switchboard_core::{ChannelError, ChatAddress, OutboundFile};
use switchboard_runtime::files::{FilePoster, PostError};

/// Tries of one upload.
const ATTEMPTS: u32 = 3;
/// The longest a rate limit is waited out before the upload is given up.
const LONGEST_WAIT: Duration = Duration::from_secs(10);

/// Posts files through the gateway's channels.
pub(crate) struct ChannelFiles {
    channels: ChannelSet,
}

impl ChannelFiles {
    pub(crate) fn new(channels: ChannelSet) -> Self {
        Self { channels }
    }
}

#[async_trait]
impl FilePoster for ChannelFiles {
    async fn limit(&self, to: &ChatAddress) -> Result<u64, PostError> {
        let channel = self
            .channels
            .get(&to.channel)
            .ok_or_else(|| PostError::NoChannel(to.channel.clone()))?;
        channel
            .upload_limit()
            .await
            .ok_or_else(|| PostError::NoFiles(to.channel.clone()))
    }

    async fn post(&self, file: OutboundFile) -> Result<(), PostError> {
        let channel = self
            .channels
            .get(&file.address.channel)
            .ok_or_else(|| PostError::NoChannel(file.address.channel.clone()))?;
        let mut attempt = 1;
        loop {
            let wait = match channel.send_file(&file).await {
                Ok(_) => {
                    self.channels.health().ok(channel.name());
                    return Ok(());
                }
                Err(ChannelError::RateLimited(secs)) if attempt < ATTEMPTS => Duration::from_secs(secs.max(1)),
                Err(ChannelError::Transient(_)) if attempt < ATTEMPTS => Duration::from_secs(u64::from(attempt)),
                Err(e) => {
                    tracing::warn!(channel = %channel.name(), file = %file.name, error = %e, "a file upload failed");
                    return Err(PostError::Refused(e));
                }
            };
            if wait > LONGEST_WAIT {
                return Err(PostError::WaitTooLong(wait));
            }
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }
}
