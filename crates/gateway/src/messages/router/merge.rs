//! Merged bursts: messages one person sends in quick succession become one
//! turn, and nothing waits for them by default (docs/conversations.md). A
//! message that finds its session idle starts its turn at once; one of the
//! same person that comes before the model has written anything joins that
//! turn (`joining`); those that queue behind a running turn are taken
//! together when it ends. With `merge_window_ms` (per channel, opt-in) a
//! message also waits that long for the next one, and the wait starts
//! again with each that comes. Never across people: another person's
//! message ends the gathering and has a turn of its own after this one.

use super::Router;
use super::session::Queued;
use crate::messages::taken::Taken;
use std::time::Duration;
use switchboard_config::Config;
use switchboard_core::Action;
use tokio::sync::mpsc;

/// At most this many messages make one turn.
pub(super) const MAX_MERGED: usize = 10;
/// Messages found pending at start were queued together: the next one is
/// looked for this long.
const RECOVERED_GRACE: Duration = Duration::from_millis(50);

/// Whether `next` may join the turn whose latest message is `last` (a
/// voice message to transcribe never joins: it is heard on its own). With
/// a window, only if it came within it of `last`. Never one taken in an
/// earlier life of the process (`Taken::held_here`): that is left behind.
pub(super) fn joins(config: &Config, last: &Taken, next: &Queued, window_ms: i64) -> bool {
    next.follow_up.is_none()
        && crate::messages::voice::audio_of(config, &next.t.m).is_none()
        && matches!(next.t.m.action, Action::Text)
        && next.t.recovered == last.recovered
        && next.t.life == last.life
        && next.t.m.sender == last.m.sender
        && (window_ms == 0 || next.t.received_at.saturating_sub(last.received_at) <= window_ms)
}

/// `next` joins the turn whose latest message is `last`: it becomes the
/// latest, carrying the keys of the others in `merged`.
pub(super) fn absorb(last: &mut Taken, earlier: &mut Vec<Taken>, mut next: Taken) {
    next.merged = std::mem::take(&mut last.merged);
    next.merged.push(last.key.clone());
    earlier.push(std::mem::replace(last, next));
}

/// The channel's fixed wait, in ms (0: none).
pub(super) fn window_of(config: &Config, t: &Taken) -> i64 {
    let window_ms = config.channels.merge_window_ms(&t.m.address.channel);
    i64::try_from(window_ms).unwrap_or(i64::MAX)
}

impl Router {
    /// `first` with the messages of its sender already queued behind it
    /// (and, with a window, those that come within it): the turn's last
    /// message (carrying the others' keys in `merged`) and the earlier
    /// ones, oldest first. A message that cannot join is left in `held`
    /// for the next turn.
    pub(super) async fn gather(
        &self,
        session_key: &str,
        first: Taken,
        queue: &mut mpsc::Receiver<Queued>,
        held: &mut Option<Queued>,
    ) -> (Taken, Vec<Taken>) {
        let config = self.runtime.config();
        if !matches!(first.m.action, Action::Text) {
            return (first, Vec::new());
        }
        let window_ms = window_of(&config, &first);
        let room = self.room(session_key, &first).await;
        let mut earlier: Vec<Taken> = Vec::new();
        let mut last = first;
        while earlier.len() + 1 < room {
            let wait = if last.recovered {
                RECOVERED_GRACE
            } else {
                let due = last.received_at.saturating_add(window_ms);
                Duration::from_millis(u64::try_from(due - self.runtime.store().now_ms()).unwrap_or(0))
            };
            let next = match queue.try_recv() {
                Ok(q) => Some(q),
                Err(_) if wait.is_zero() => None,
                Err(_) => tokio::time::timeout(wait, queue.recv()).await.ok().flatten(),
            };
            match next {
                Some(q) if joins(&config, &last, &q, window_ms) => absorb(&mut last, &mut earlier, q.t),
                Some(q) => {
                    *held = Some(q);
                    break;
                }
                None => break,
            }
        }
        if !earlier.is_empty() {
            tracing::info!(session_messages = earlier.len() + 1, sender = %last.m.sender, "messages sent in quick succession make one turn");
        }
        (last, earlier)
    }

    /// How many messages the turn starting with `first` may have. One found
    /// pending at start whose turn had stored what it was asked is formed
    /// again exactly as it ran (its record is kept under its first
    /// message's key and counts the messages that joined it); a message
    /// that queued behind it never did, and is not answered with it.
    async fn room(&self, session_key: &str, first: &Taken) -> usize {
        if !first.recovered {
            return MAX_MERGED;
        }
        match self.runtime.asked_in_turn(session_key, &first.key).await {
            Ok(0) => MAX_MERGED,
            Ok(n) => n.min(MAX_MERGED),
            Err(e) => {
                tracing::error!(session = %session_key, error = %e, "cannot read an interrupted turn's record; its messages are taken one by one");
                1
            }
        }
    }
}
