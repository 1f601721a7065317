//! A turn that later messages may join: while it runs, the session's queue
//! is read, and a message of the same person that arrives before the model
//! has written anything is handed to the runtime, which asks the model
//! again with it (`switchboard_runtime::Join`). A message that cannot join
//! (another person's, a command, a file, one the runtime refused because
//! the answer is being written) is held for the next turn, and the queue is
//! not read further until then (docs/conversations.md, "Merged bursts").

use super::Router;
use super::merge::{MAX_MERGED, absorb, joins, window_of};
use super::session::{Lane, Queued};
use crate::messages::taken::Taken;
use std::future::Future;
use std::pin::Pin;
use switchboard_runtime::{Join, TurnError, TurnReply, TurnRequest};
use tokio::sync::{mpsc, oneshot};

/// A message being offered to the turn: it comes back with whether it
/// joined.
type Offer = Pin<Box<dyn Future<Output = (Queued, bool)> + Send>>;

impl Router {
    /// Run `request`, the turn of `t` (and `earlier`), taking in what joins
    /// it: `t` and `earlier` are the turn's messages when it ends.
    pub(super) async fn run_joined(
        &self,
        mut request: TurnRequest,
        (t, earlier): (&mut Taken, &mut Vec<Taken>),
        (queue, held): Lane<'_>,
    ) -> Result<TurnReply, TurnError> {
        if held.is_some() || !matches!(t.m.action, switchboard_core::Action::Text) {
            return self.runtime.run_turn(request).await;
        }
        let (tx, rx) = mpsc::channel(1);
        request.joins = Some(rx);
        let run = self.runtime.run_turn(request);
        tokio::pin!(run);
        let mut offered: Option<Offer> = None;
        loop {
            let reading = held.is_none() && offered.is_none() && !tx.is_closed() && earlier.len() + 1 < MAX_MERGED;
            tokio::select! {
                r = &mut run => {
                    if let Some(offer) = offered.take() {
                        *held = Some(offer.await.0);
                    }
                    return r;
                }
                Some(q) = queue.recv(), if reading => {
                    let config = self.runtime.config();
                    if q.t.m.attachments.is_empty() && joins(&config, t, &q, window_of(&config, t)) {
                        offered = Some(Box::pin(offer(tx.clone(), q)));
                    } else {
                        *held = Some(q);
                    }
                }
                (q, taken) = async { offered.as_mut().expect("polled only when offered").await }, if offered.is_some() => {
                    offered = None;
                    if taken {
                        tracing::info!(session_messages = earlier.len() + 2, sender = %q.t.m.sender, "a message came before the answer was written; it joins the turn");
                        self.statuses.working(&q.t);
                        absorb(t, earlier, q.t);
                    } else {
                        *held = Some(q);
                    }
                }
            }
        }
    }
}

/// Hand `q` to the running turn; whether it joined.
async fn offer(tx: mpsc::Sender<Join>, q: Queued) -> (Queued, bool) {
    let (taken, answer) = oneshot::channel();
    let join = Join {
        text: q.t.m.text.clone(),
        taken,
    };
    if tx.send(join).await.is_err() {
        return (q, false);
    }
    let joined = answer.await.unwrap_or(false);
    (q, joined)
}
