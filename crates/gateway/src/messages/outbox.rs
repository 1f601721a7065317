//! Delivers the outbox (announcements and replies) into channels: due rows
//! are sent, marked delivered, or rescheduled with backoff (the platform's
//! retry-after for rate limits). Rows survive restarts, so a message whose
//! channel is down, or whose gateway died, is delivered once things are
//! back.

use crate::channels::ChannelSet;
use std::time::Duration;
use switchboard_core::{ChannelError, ChatAddress, Outbound};
use switchboard_store::{OutboxRow, Store};

const MAX_BACKOFF_MS: i64 = 60_000;

/// How long a row taken for one attempt is not due again (an attempt that
/// outlasts it may be repeated by the channel's next owner; a reclaim of
/// this instance frees it at once).
const CLAIM_MS: i64 = 30_000;

/// Permanent refusals (the chat is gone, the bot was removed) after which
/// a row is given up: logged as an error and kept as `failed`. Transient
/// failures and rate limits are retried for as long as it takes.
pub(crate) const GIVE_UP_AFTER: i64 = 5;

fn backoff_ms(attempts: i64) -> i64 {
    (250i64 << attempts.clamp(0, 16)).min(MAX_BACKOFF_MS)
}

/// Deliver due announcements until the task is aborted: those of channels
/// this instance runs (another instance delivers the rest). Between rows
/// it sleeps until the next one is due or a new one is queued (see the
/// store's `signals`): nothing is read while nothing is waiting.
pub fn spawn(store: Store, channels: ChannelSet, fences: crate::cluster::Fences) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            // Register interest before reading, so a row queued meanwhile wakes us.
            let queued = store.outbox_queued();
            let ours: Vec<String> = channels
                .all()
                .iter()
                .map(|c| c.name().to_string())
                .filter(|c| fences.runs(c))
                .collect();
            let handled = match store.outbox().due_in(&ours, 100).await {
                Ok(rows) => {
                    // Counted when taken: rows this instance may not take
                    // (it was taken for dead) do not keep it busy.
                    let mut n = 0;
                    for row in rows {
                        n += usize::from(deliver(&store, &channels, row).await);
                    }
                    n
                }
                Err(e) => {
                    tracing::error!(error = %e, "cannot read the outbox");
                    0
                }
            };
            let next = match store.outbox().next_due_in(&ours).await {
                Ok(next) => next.map(|at| Duration::from_millis((at - store.now_ms()).clamp(0, MAX_BACKOFF_MS) as u64)),
                Err(e) => {
                    tracing::error!(error = %e, "cannot read the outbox");
                    Some(Duration::from_secs(1))
                }
            };
            match next {
                // More are due: go on at once, unless none could be handled
                // (the store refuses the updates), then not in a tight loop.
                Some(d) if d.is_zero() && handled > 0 => continue,
                Some(d) if d.is_zero() => store.sleep_until(queued, Some(Duration::from_secs(1))).await,
                next => store.sleep_until(queued, next).await,
            }
        }
    })
}

/// Try `row` once; whether it was taken for the attempt.
async fn deliver(store: &Store, channels: &ChannelSet, row: OutboxRow) -> bool {
    // Taken one row at a time, just before it is sent: a batch read before
    // a pause is not sent again where the channel's next owner sent it.
    match store.outbox().claim(row.id, CLAIM_MS).await {
        Ok(true) => {}
        Ok(false) => {
            tracing::debug!(key = %row.delivery_key, "outbox row no longer due here (delivered or taken elsewhere)");
            return false;
        }
        Err(e) => {
            tracing::error!(key = %row.delivery_key, error = %e, "cannot take an outbox row");
            return false;
        }
    }
    let address = ChatAddress::new(row.channel.clone(), row.chat.clone()).with_thread(row.thread.clone());
    let outcome = match channels.get(&row.channel) {
        None => Err(ChannelError::Transient(format!(
            "channel '{}' is not running",
            row.channel
        ))),
        Some(ch) => {
            let mut out = Outbound::new(address, row.body.clone());
            out.reply_to = row.reply_to.clone();
            out.delivery_key = Some(row.delivery_key.clone());
            ch.send(&out).await.map(|_| ())
        }
    };
    let result = match outcome {
        Ok(()) => store.outbox().mark_delivered(row.id).await,
        Err(ChannelError::RateLimited(secs)) => {
            store
                .outbox()
                .retry(row.id, (secs as i64).max(1) * 1000, "rate limited")
                .await
        }
        Err(e @ (ChannelError::Permanent(_) | ChannelError::Unsupported(_))) if row.attempts + 1 >= GIVE_UP_AFTER => {
            tracing::error!(
                run_id = %row.delivery_key,
                channel = %row.channel,
                chat = %row.chat,
                attempts = row.attempts + 1,
                error = %e,
                "outbox row given up: the channel refused it for good"
            );
            store.outbox().give_up(row.id, &e.to_string()).await
        }
        Err(e) => {
            tracing::warn!(run_id = %row.delivery_key, attempts = row.attempts + 1, error = %e, "announcement not delivered yet");
            store
                .outbox()
                .retry(row.id, backoff_ms(row.attempts), &e.to_string())
                .await
        }
    };
    if let Err(e) = result {
        tracing::error!(key = %row.delivery_key, error = %e, "cannot update the outbox");
    }
    true
}

#[cfg(test)]
mod tests;
