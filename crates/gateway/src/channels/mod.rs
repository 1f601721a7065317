//! The running channels by instance name, delivery with retries, and what
//! is known of each connection (`health`).

mod health;

pub(crate) use health::HealthBoard;
use parking_lot::RwLock;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use switchboard_core::{Channel, ChannelError, MessageRef, Outbound};

#[derive(Clone, Default)]
/// The running channels, by configured name; every clone sees the same
/// set (a reload adds and removes channels while the gateway runs).
pub struct ChannelSet {
    channels: Arc<RwLock<BTreeMap<String, Arc<dyn Channel>>>>,
    /// What sends and the adapters' own reports say of each connection.
    health: Arc<HealthBoard>,
}

impl ChannelSet {
    /// Add (or replace) a channel.
    pub fn insert(&mut self, channel: Arc<dyn Channel>) {
        self.channels.write().insert(channel.name().to_string(), channel);
    }

    /// Take a channel out (a reload removed or replaced it).
    pub(crate) fn remove(&self, name: &str) -> Option<Arc<dyn Channel>> {
        self.channels.write().remove(name)
    }

    pub(crate) fn get(&self, name: &str) -> Option<Arc<dyn Channel>> {
        self.channels.read().get(name).cloned()
    }

    /// The channels' connection states.
    pub(crate) fn health(&self) -> &Arc<HealthBoard> {
        &self.health
    }

    pub(crate) fn all(&self) -> Vec<Arc<dyn Channel>> {
        self.channels.read().values().cloned().collect()
    }

    /// Send, retrying transient failures and rate limits with the
    /// platform's retry-after, up to `attempts` tries.
    pub(crate) async fn send(&self, message: &Outbound, attempts: u32) -> Result<Vec<MessageRef>, ChannelError> {
        let Some(channel) = self.get(&message.address.channel) else {
            return Err(ChannelError::Permanent(format!(
                "channel '{}' is not running",
                message.address.channel
            )));
        };
        // Every try is the same delivery: where the platform drops a repeat
        // by its key (Discord's nonce, Matrix's transaction id), a try whose
        // answer was lost does not post it twice.
        let keyed;
        let message = match message.delivery_key {
            Some(_) => message,
            None => {
                keyed = Outbound {
                    delivery_key: Some(format!("send:{}", uuid::Uuid::new_v4())),
                    ..message.clone()
                };
                &keyed
            }
        };
        let mut attempt = 0;
        loop {
            let sent = channel.send(message).await;
            match &sent {
                // The platform answered (a rate limit is an answer too).
                Ok(_) | Err(ChannelError::RateLimited(_)) => self.health.ok(channel.name()),
                Err(e @ ChannelError::Transient(_)) => self.health.failed(channel.name(), &e.to_string()),
                // A refusal of one message says nothing of the connection.
                Err(_) => {}
            }
            match sent {
                Ok(refs) => return Ok(refs),
                Err(ChannelError::RateLimited(secs)) if attempt + 1 < attempts => {
                    tokio::time::sleep(Duration::from_secs(secs.max(1))).await;
                }
                Err(ChannelError::Transient(e)) if attempt + 1 < attempts => {
                    let backoff = Duration::from_millis(200 * 2u64.pow(attempt.min(6)));
                    tracing::warn!(channel = %message.address.channel, error = %e, ?backoff, "send failed; retrying");
                    tokio::time::sleep(backoff).await;
                }
                Err(e) => return Err(e),
            }
            attempt += 1;
        }
    }
}
