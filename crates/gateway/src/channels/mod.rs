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
    /// platform's retry-after, up to `attempts` tries. Every try is the same
    /// delivery (see [`keyed`]).
    pub(crate) async fn send(&self, message: &Outbound, attempts: u32) -> Result<Vec<MessageRef>, ChannelError> {
        let message = &*keyed(message, "send");
        self.retrying(&message.address.channel, attempts, |ch| async move {
            ch.send(message).await
        })
        .await
    }

    /// `op` on channel `name`, tried up to `attempts` times while it fails
    /// for a moment: a transient failure is backed off, a rate limit waited
    /// out; each answer says how the connection is (`health`).
    pub(crate) async fn retrying<T, F, Fut>(&self, name: &str, attempts: u32, mut op: F) -> Result<T, ChannelError>
    where
        F: FnMut(Arc<dyn Channel>) -> Fut,
        Fut: std::future::Future<Output = Result<T, ChannelError>>,
    {
        let Some(channel) = self.get(name) else {
            return Err(ChannelError::Permanent(format!("channel '{name}' is not running")));
        };
        let mut attempt = 0;
        loop {
            let sent = op(channel.clone()).await;
            match &sent {
                // The platform answered (a rate limit is an answer too).
                Ok(_) | Err(ChannelError::RateLimited(_)) => self.health.ok(channel.name()),
                Err(e @ ChannelError::Transient(_)) => self.health.failed(channel.name(), &e.to_string()),
                // A refusal of one message says nothing of the connection.
                Err(_) => {}
            }
            match sent {
                Ok(done) => return Ok(done),
                Err(ChannelError::RateLimited(secs)) if attempt + 1 < attempts => {
                    tokio::time::sleep(Duration::from_secs(secs.max(1))).await;
                }
                Err(ChannelError::Transient(e)) if attempt + 1 < attempts => {
                    let backoff = Duration::from_millis(200 * 2u64.pow(attempt.min(6)));
                    tracing::warn!(channel = %name, error = %e, ?backoff, "send failed; retrying");
                    tokio::time::sleep(backoff).await;
                }
                Err(e) => return Err(e),
            }
            attempt += 1;
        }
    }
}

/// `message` with a delivery key: its own, or a new one under `prefix`.
/// Where the platform drops a repeat by its key (Discord's nonce, Matrix's
/// transaction id), a try whose answer was lost is not posted twice, also
/// when the outbox sends it later under the same key.
pub(crate) fn keyed<'a>(message: &'a Outbound, prefix: &str) -> std::borrow::Cow<'a, Outbound> {
    match message.delivery_key {
        Some(_) => std::borrow::Cow::Borrowed(message),
        None => std::borrow::Cow::Owned(Outbound {
            delivery_key: Some(format!("{prefix}:{}", uuid::Uuid::new_v4())),
            ..message.clone()
        }),
    }
}
