//! Delivering a chat reply: a few tries in memory, then, when the channel
//! is still down or rate limiting, the durable outbox, which delivers it
//! once the channel is back (also after a restart). Only a refusal that
//! retrying cannot fix (a permanent error) drops the reply.
//!
//! The answer to an inbox message (`answer`) is queued in the outbox first,
//! in the same transaction as the message's done mark, then delivered at
//! once by this process; a crash in between leaves it to the outbox worker
//! of the next start. (A crash in the instant between the platform taking
//! it and the outbox row being marked would send it twice: the one window
//! of at-least-once left.)

use crate::channels::ChannelSet;
use crate::messages::taken::Taken;
use switchboard_core::{ChannelError, Inbound, Outbound};
use switchboard_store::{QueuedReply, Store};

/// Tries per reply before it goes to the outbox worker.
pub(crate) const SEND_ATTEMPTS: u32 = 8;

/// Tell `to`'s chat `text` once, best effort: no retry, nothing queued
/// (a stranger's notice, or that a message waits while the database does
/// not take writes).
pub(crate) fn notice(channels: &ChannelSet, to: &Inbound, text: &str) {
    let mut out = Outbound::new(to.address.clone(), text);
    out.reply_to = to.message_id.clone();
    let Some(channel) = channels.get(&to.address.channel) else {
        return;
    };
    tokio::spawn(async move {
        if let Err(e) = channel.send(&out).await {
            tracing::info!(channel = %out.address.channel, error = %e, "a notice was not delivered (not retried)");
        }
    });
}

/// Answer inbox message `to` with `text` (see the module doc).
pub(crate) async fn answer(channels: &ChannelSet, store: &Store, to: &Taken, text: String) {
    let address = &to.m.address;
    let mut out = Outbound::new(address.clone(), text);
    out.reply_to = to.m.message_id.clone();
    out.delivery_key = Some(switchboard_store::reply_key(&to.key));
    let queued = QueuedReply {
        channel: &address.channel,
        chat: &address.chat,
        thread: address.thread.as_deref(),
        reply_to: out.reply_to.as_deref(),
        body: &out.text,
    };
    match store.inbox().finish_turn(&to.key, &to.merged, Some(&queued)).await {
        Ok(true) => switchboard_telemetry::metrics::message_answered(&address.channel),
        Ok(false) => {
            // Not this instance's any more (it stalled past its lease and
            // another adopted the message): that one answers, not this.
            tracing::warn!(key = %to.key, "an answer for a message another gateway took over was dropped");
            return;
        }
        Err(e) if !to.may_be_ours(store).await => {
            // Stopped inside this write past its lease, and the server
            // ended it: the instance that adopted the message answers.
            tracing::warn!(key = %to.key, error = %e, "an answer for a message another gateway took over was dropped");
            return;
        }
        Err(e) => {
            // The person still gets the answer; the message stays pending.
            tracing::error!(key = %to.key, error = %e, "cannot record the answer in the inbox");
            deliver(channels, store, &out, SEND_ATTEMPTS).await;
            return;
        }
    }
    let marked = match channels.send(&out, SEND_ATTEMPTS).await {
        Ok(_) => {
            store.inbox().reply_delivered(&to.key);
            Ok(())
        }
        Err(ChannelError::Permanent(e)) => {
            tracing::error!(channel = %address.channel, error = %e, "reply refused by the channel; not retried");
            store.inbox().reply_refused(&to.key, &e).await
        }
        Err(e) => {
            tracing::warn!(channel = %address.channel, error = %e, "reply not delivered yet; the outbox keeps trying");
            store.inbox().reply_to_outbox(&to.key, &e.to_string()).await
        }
    };
    if let Err(e) = marked {
        tracing::error!(key = %to.key, error = %e, "cannot update the reply's outbox row");
    }
}

/// Inbox message `to` is done with nothing left for the outbox to send
/// (its answer is on screen already, or must not be stored).
/// False when the message is no longer this instance's (another adopted it).
pub(crate) async fn answered_in_place(store: &Store, to: &Taken) -> bool {
    match store.inbox().finish_turn(&to.key, &to.merged, None).await {
        Ok(mine) => {
            if mine {
                switchboard_telemetry::metrics::message_answered(&to.m.address.channel);
            }
            mine
        }
        Err(e) => {
            tracing::error!(key = %to.key, error = %e, "cannot mark a message done in the inbox");
            to.may_be_ours(store).await
        }
    }
}

/// Answer inbox message `to` with `text` that must not be stored (a
/// sign-in link): the message is marked done without a reply row, and the
/// text is sent now or never (the person can ask again).
pub(crate) async fn answer_privately(channels: &ChannelSet, store: &Store, to: &Taken, text: String) {
    if !answered_in_place(store, to).await {
        tracing::warn!(key = %to.key, "a private answer for a message another gateway took over was dropped");
        return;
    }
    let mut out = Outbound::new(to.m.address.clone(), text);
    out.reply_to = to.m.message_id.clone();
    out.delivery_key = Some(switchboard_store::reply_key(&to.key));
    if let Err(e) = channels.send(&out, SEND_ATTEMPTS).await {
        tracing::warn!(channel = %to.m.address.channel, error = %e, "a private answer could not be delivered; it is not kept");
    }
}

/// Send `out`, trying `attempts` times; keep it in the outbox when the
/// channel keeps failing. Returns whether it was sent now.
pub(crate) async fn deliver(channels: &ChannelSet, store: &Store, out: &Outbound, attempts: u32) -> bool {
    // One key for the tries here and the outbox's later ones (keyed apart
    // from run announcements, which use the run id).
    let out = &*crate::channels::keyed(out, "reply");
    let key = out.delivery_key.clone().unwrap_or_default();
    let error = match channels.send(out, attempts).await {
        Ok(_) => return true,
        Err(ChannelError::Permanent(e)) => {
            tracing::error!(channel = %out.address.channel, error = %e, "reply refused by the channel; not retried");
            return false;
        }
        Err(e) => e,
    };
    let address = &out.address;
    let queued = store
        .outbox()
        .enqueue(
            &key,
            &address.channel,
            &address.chat,
            address.thread.as_deref(),
            &out.text,
        )
        .await;
    match queued {
        Ok(_) => tracing::warn!(
            channel = %address.channel, error = %error, outbox = %key,
            "reply not delivered yet; kept in the outbox until the channel is back"
        ),
        Err(e) => tracing::error!(
            channel = %address.channel, error = %error, store_error = %e,
            "reply could not be delivered nor kept"
        ),
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_core::ChatAddress;

    #[tokio::test]
    async fn a_reply_to_a_channel_that_stays_down_waits_in_the_outbox_and_arrives_once() {
        let peers = crate::test_peers::team_channel().await;
        let (store, team, channels) = (&peers.store, &peers.team, &peers.channels);
        let address = ChatAddress::new("local.team", "general").with_thread(Some("t9".to_string()));

        // Up: sent at once, nothing kept.
        assert!(deliver(channels, store, &Outbound::new(address.clone(), "first"), 2).await);
        assert_eq!(store.outbox().due(10).await.unwrap().len(), 0);

        team.set_down(true);
        assert!(!deliver(channels, store, &Outbound::new(address.clone(), "second"), 2).await);
        let kept = store.outbox().due(10).await.unwrap();
        assert_eq!(kept.len(), 1);
        assert!(kept[0].delivery_key.starts_with("reply:"), "{}", kept[0].delivery_key);

        let worker = crate::messages::outbox::spawn(store.clone(), channels.clone(), crate::cluster::Fences::default());
        team.set_down(false);
        for _ in 0..50 {
            if team.events_after(0).len() >= 2 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        worker.abort();
        let texts: Vec<_> = team.events_after(0).into_iter().map(|e| (e.text, e.thread)).collect();
        assert_eq!(
            texts,
            [
                ("first".to_string(), Some("t9".to_string())),
                ("second".to_string(), Some("t9".to_string()))
            ],
            "the kept reply arrives once, in its thread"
        );
    }
}
