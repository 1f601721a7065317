//! A turn that failed because the database stopped taking writes (its
//! volume full, read-only, away): its messages are not answered with the
//! error, nor closed. The person is told once that the message is kept;
//! when the database takes writes again, the messages are run again as
//! after a restart (`recovered`: an answer already on record is sent, not
//! asked of the model again). Until then they stay pending in the inbox,
//! so a restart answers them too; after `MOST_TIMES` they wait for it
//! (docs/operations.md, "A full disk").

use super::Router;
use crate::messages::stream_out::StreamOut;
use crate::messages::taken::Taken;
use std::sync::Arc;
use std::time::Duration;
use switchboard_store::StoreError;

/// Longest pause between two checks of the database.
const LONGEST_WAIT: Duration = Duration::from_secs(30);

/// Times a turn is put back before it is left pending for the next start:
/// a database that takes the check but not the turn's writes would
/// otherwise cost a model request every 30 s for as long as it lasts.
const MOST_TIMES: u32 = 12;

/// Messages of a turn the database did not let finish, and whether the
/// person was told in place (see `Router::put_back`).
pub(super) struct HeldUp(pub Vec<Taken>, pub bool);

impl HeldUp {
    /// Nothing held up: the turn was answered, or is another's.
    pub(super) fn none() -> Self {
        Self(Vec::new(), false)
    }
}

impl Router {
    /// The turn of `messages` (the last one's, in the order they came)
    /// failed with `e`, the database not taking writes; `streamed` is its
    /// answer shown so far. Unless another instance adopted the last
    /// message meanwhile (this one stalled past its lease: that one
    /// answers and shows the status), they are held up to be put back.
    pub(super) async fn held_up(&self, messages: Vec<Taken>, e: &StoreError, streamed: Option<StreamOut>) -> HeldUp {
        let Some(t) = messages.last() else {
            return HeldUp::none();
        };
        if !t.may_be_ours(self.runtime.store()).await {
            tracing::warn!(key = %t.key, error = %e, "a turn failed after another gateway took its message over; that one answers");
            self.statuses.forget(t);
            if let Some(s) = streamed {
                s.stopped().await;
            }
            return HeldUp::none();
        }
        tracing::error!(error = %e, remedy = crate::messages::storage_down::remedy(e), "a turn could not be recorded; its messages are answered once the database takes writes");
        let told = match streamed {
            Some(s) => s.finish(crate::messages::storage_down::WAITS).await,
            None => false,
        };
        HeldUp(messages, told)
    }

    /// Tell the person (unless `told`: shown in place of a streamed
    /// answer), then run `messages` again once the database takes writes.
    pub(super) fn put_back(self: Arc<Self>, messages: Vec<Taken>, told: bool) {
        if messages.is_empty() {
            return;
        }
        // Told the first time only; each time put back, the database is
        // asked less often.
        let times = messages.iter().map(|t| t.held_up).max().unwrap_or(0);
        if times >= MOST_TIMES {
            tracing::error!(
                count = messages.len(),
                "the database still does not take this turn's writes; its messages stay pending and are answered at the next start"
            );
            return;
        }
        tokio::spawn(async move {
            // Told while the database cannot say the message is another's.
            let messages = self.still_held(messages).await;
            let Some(last) = messages.last() else { return };
            if !told && times == 0 {
                crate::messages::reply::notice(&self.channels, &last.m, crate::messages::storage_down::WAITS);
            }
            let mut wait = Duration::from_secs(1 << times.min(5)).min(LONGEST_WAIT);
            loop {
                tokio::time::sleep(wait).await;
                match self.runtime.store().writable().await {
                    Ok(true) => break,
                    Ok(false) => {
                        tracing::warn!(
                            "this instance was taken for dead meanwhile; the messages it held up are another's now"
                        );
                        return;
                    }
                    Err(_) => wait = (wait * 2).min(LONGEST_WAIT),
                }
            }
            tracing::info!(
                count = messages.len(),
                "the database takes writes again; answering the messages it held up"
            );
            for mut t in self.still_held(messages).await {
                t.recovered = true;
                t.held_up += 1;
                // Merged again as they queue (see `merge`).
                t.merged.clear();
                self.start_turn(t);
            }
        });
    }

    /// `messages` without those another instance took over.
    async fn still_held(&self, messages: Vec<Taken>) -> Vec<Taken> {
        let mut held = Vec::with_capacity(messages.len());
        for t in messages {
            if t.may_be_ours(self.runtime.store()).await {
                held.push(t);
            } else {
                tracing::warn!(key = %t.key, "a held-up message was taken over by another gateway; it answers, not this one");
                self.statuses.forget(&t);
            }
        }
        held
    }
}
