//! Status reactions: a reaction on a person's message shows that it was
//! taken (👀), that its turn is running (🤔), and how it ended (✅ / ❌;
//! each platform may pick its own emoji). Nothing is shown for a message
//! answered within `FIRST_AFTER` (the answer says it all; a failure is
//! still marked). At most one change a second per message: a change asked
//! for sooner waits, and only the latest asked for is shown. Off with
//! `status_reactions = false` on a channel (docs/conversations.md).

use crate::channels::ChannelSet;
use crate::messages::taken::Taken;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use switchboard_config::Config;
use switchboard_core::{Action, Channel, ChannelError, ChatAddress, MessageStatus, StatusMark};
use tokio::sync::watch;

/// The least time between two reactions on one message.
const MIN_INTERVAL: Duration = Duration::from_secs(1);

/// How long a message goes without a reaction: one answered sooner gets
/// none (as typing, which starts after as long), so a quick answer costs
/// no reaction requests at all.
const FIRST_AFTER: Duration = Duration::from_millis(800);

/// The status reactions of messages being handled, by inbox key.
#[derive(Default)]
pub(crate) struct Statuses(Mutex<HashMap<String, watch::Sender<MessageStatus>>>);

impl Statuses {
    /// `t` was taken: show it, when its channel wants status reactions.
    pub(crate) fn taken(&self, config: &Config, channels: &ChannelSet, t: &Taken) {
        let m = &t.m;
        let (Some(id), Action::Text) = (&m.message_id, &m.action) else {
            return;
        };
        if !config.channels.status_reactions(&m.address.channel) {
            return;
        }
        let Some(channel) = channels.get(&m.address.channel) else {
            return;
        };
        let (tx, rx) = watch::channel(MessageStatus::Taken);
        tokio::spawn(show(channel, m.address.clone(), id.clone(), rx));
        self.0.lock().insert(t.key.clone(), tx);
    }

    /// The turn of `t` (and of the messages merged into it) is running.
    pub(crate) fn working(&self, t: &Taken) {
        let map = self.0.lock();
        for key in keys(t) {
            if let Some(tx) = map.get(key) {
                let _ = tx.send(MessageStatus::Working);
            }
        }
    }

    /// `t` (and the messages merged into it) is another instance's now
    /// (it adopted them): this one shows nothing more on them.
    pub(crate) fn forget(&self, t: &Taken) {
        let mut map = self.0.lock();
        for key in keys(t) {
            // Its `show` task ends once the sender is gone.
            map.remove(key);
        }
    }

    /// `t` (and the messages merged into it) ended with `status`.
    pub(crate) fn ended(&self, t: &Taken, status: MessageStatus) {
        let mut map = self.0.lock();
        for key in keys(t) {
            if let Some(tx) = map.remove(key) {
                let _ = tx.send(status);
            }
        }
    }
}

fn keys(t: &Taken) -> impl Iterator<Item = &str> {
    std::iter::once(t.key.as_str()).chain(t.merged.iter().map(String::as_str))
}

/// Show the latest status asked for on `rx`, at most one change per
/// `MIN_INTERVAL`, until a final one is shown.
async fn show(
    channel: Arc<dyn Channel>,
    address: ChatAddress,
    message_id: String,
    mut rx: watch::Receiver<MessageStatus>,
) {
    if answered_quickly(&mut rx).await {
        return;
    }
    let mut shown: Option<MessageStatus> = None;
    let mut changed_at: Option<tokio::time::Instant> = None;
    loop {
        let wanted = *rx.borrow_and_update();
        if Some(wanted) == shown {
            if shown.is_some_and(MessageStatus::is_final) || rx.changed().await.is_err() {
                return;
            }
            continue;
        }
        if let Some(at) = changed_at {
            tokio::time::sleep_until(at + MIN_INTERVAL).await;
        }
        // What is wanted now, after the wait.
        let wanted = *rx.borrow_and_update();
        let mark = StatusMark {
            address: &address,
            message_id: &message_id,
            previous: shown,
            status: wanted,
        };
        changed_at = Some(tokio::time::Instant::now());
        match channel.set_status(&mark).await {
            Ok(()) => shown = Some(wanted),
            Err(ChannelError::Unsupported(_)) => return,
            Err(e) => {
                // Not tried again (a chat may forbid reactions): the next
                // change replaces what this one meant to show.
                tracing::debug!(channel = channel.name(), error = %e, "a status reaction could not be set");
                shown = Some(wanted);
            }
        }
    }
}

/// Waits up to `FIRST_AFTER` for the message to end; true when it was
/// answered by then (nothing to show). A failure, or a message still
/// waiting or running, is shown from then on.
async fn answered_quickly(rx: &mut watch::Receiver<MessageStatus>) -> bool {
    let deadline = tokio::time::Instant::now() + FIRST_AFTER;
    loop {
        let now = *rx.borrow_and_update();
        if now.is_final() {
            return now == MessageStatus::Done;
        }
        match tokio::time::timeout_at(deadline, rx.changed()).await {
            Ok(Ok(())) => continue,
            // Time is up, or nothing more will be asked: show what is wanted.
            Ok(Err(_)) | Err(_) => return false,
        }
    }
}
