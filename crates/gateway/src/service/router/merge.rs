//! Merged bursts: messages one person sends in quick succession become one
//! turn. A message waits up to `merge_window_ms` (per channel) for the
//! next one from the same person in the same conversation; each that comes
//! in time joins it and the wait starts again (docs/conversations.md).
//! Never across people: another person's message ends the wait and has a
//! turn of its own after this one.

use super::Router;
use super::session::Queued;
use crate::service::taken::Taken;
use std::time::Duration;
use switchboard_config::Config;
use switchboard_core::Action;
use tokio::sync::mpsc;

/// At most this many messages make one turn.
const MAX_MERGED: usize = 10;
/// Messages found pending at start were queued together: the next one is
/// looked for this long.
const RECOVERED_GRACE: Duration = Duration::from_millis(50);

/// Whether `next` may join the turn whose latest message is `last` (a
/// voice message to transcribe never joins: it is heard on its own).
fn joins(config: &Config, last: &Taken, next: &Queued, window_ms: i64) -> bool {
    next.follow_up.is_none()
        && crate::service::voice::audio_of(config, &next.t.m).is_none()
        && matches!(next.t.m.action, Action::Text)
        && next.t.recovered == last.recovered
        && next.t.m.sender == last.m.sender
        && next.t.received_at.saturating_sub(last.received_at) <= window_ms
}

impl Router {
    /// `first` with the messages of its sender that follow within the
    /// window: the turn's last message (carrying the others' keys in
    /// `merged`) and the earlier ones, oldest first. A message that cannot
    /// join is left in `held` for the next turn.
    pub(super) async fn gather(
        &self,
        first: Taken,
        queue: &mut mpsc::Receiver<Queued>,
        held: &mut Option<Queued>,
    ) -> (Taken, Vec<Taken>) {
        let config = self.runtime.config();
        let window_ms = config.channels.merge_window_ms(&first.m.address.channel);
        let window_ms = i64::try_from(window_ms).unwrap_or(i64::MAX);
        if window_ms == 0 || !matches!(first.m.action, Action::Text) {
            return (first, Vec::new());
        }
        let mut earlier: Vec<Taken> = Vec::new();
        let mut last = first;
        while earlier.len() + 1 < MAX_MERGED {
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
                Some(q) if joins(&config, &last, &q, window_ms) => {
                    let mut next = q.t;
                    next.merged = std::mem::take(&mut last.merged);
                    next.merged.push(last.key.clone());
                    earlier.push(last);
                    last = next;
                }
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
}
