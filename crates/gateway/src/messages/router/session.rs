//! One conversation's queue and worker: turns of a session run one after
//! another. The queue is bounded (`[limits].session_queue`; a message past
//! it is answered "busy" instead of piling up), and a worker whose queue is
//! empty ends and its session leaves memory, at once or after
//! `[limits].idle_session_secs` (the history is in the control plane and
//! read back on the next message).

use super::Router;
use super::put_back::HeldUp;
use super::recovered::Recovered;
use crate::messages::taken::Taken;
use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use switchboard_core::{ChatAddress, MessageStatus, UserId};
use switchboard_runtime::{ApprovalBroker, NoApprover, TurnError, TurnReply, TurnRequest};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The turn a session is running.
pub(super) type Current = Arc<Mutex<Option<TurnNow>>>;

/// A running turn: how to stop it, who asked for it, where and since when.
#[derive(Clone)]
pub(crate) struct TurnNow {
    pub(crate) cancel: CancellationToken,
    pub(crate) owner: UserId,
    pub(crate) agent: String,
    pub(crate) session_key: String,
    pub(crate) address: ChatAddress,
    /// Why its agent answers there (docs/routes.md).
    pub(crate) route: String,
    /// Unix ms.
    pub(crate) started_at: i64,
    /// For a `/subagents send` follow-up in a finished child's session:
    /// the session of the chat it was asked from (a `/stop` there stops it
    /// too).
    pub(crate) follow_up: Option<String>,
}

pub(super) struct Session {
    queue: mpsc::Sender<Queued>,
    /// Messages waiting: queued, or read ahead and held for the next turn.
    waiting: Arc<AtomicUsize>,
    current: Current,
}

/// A waiting message's place in its session's count; given back when the
/// message is dropped or taken apart to run.
pub(super) struct Seat(Arc<AtomicUsize>);

impl Drop for Seat {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A message waiting for its turn.
pub(super) struct Queued {
    pub t: Taken,
    /// A `/subagents send` follow-up in a finished child's session: its
    /// answer is prefixed with this, and nobody can be asked to approve.
    pub follow_up: Option<String>,
    /// Counted while it waits (set by `enqueue`).
    pub seat: Option<Seat>,
}

/// The session's queue and the message held for its next turn.
pub(super) type Lane<'a> = (&'a mut mpsc::Receiver<Queued>, &'a mut Option<Queued>);

/// The session's queue is full; the message is handed back.
pub(super) struct Busy(pub Box<Queued>);

impl Router {
    /// Cancel every running turn; how many there were.
    pub(crate) fn cancel_all_turns(&self) -> usize {
        let sessions = self.sessions.lock();
        sessions
            .values()
            .filter_map(|s| s.current.lock().as_ref().map(|t| t.cancel.cancel()))
            .count()
    }

    /// The running turn of `session_key`, if any.
    pub(crate) fn current_turn(&self, session_key: &str) -> Option<TurnNow> {
        let sessions = self.sessions.lock();
        sessions.get(session_key)?.current.lock().clone()
    }

    /// A stream for the answer to `m`, when its channel and chat want one.
    fn stream_for(&self, m: &switchboard_core::Inbound) -> Option<crate::messages::stream_out::StreamOut> {
        let channel = self.channels.get(&m.address.channel)?;
        let limits = channel.streaming()?;
        if !self.runtime.config().channels.streams(&m.address.channel, m.direct) {
            return None;
        }
        Some(crate::messages::stream_out::StreamOut::new(
            channel.clone(),
            (m.address.clone(), m.direct),
            m.message_id.clone(),
            limits,
        ))
    }

    /// Every turn running now (for the operator console).
    pub(crate) fn running_turns(&self) -> Vec<TurnNow> {
        let sessions = self.sessions.lock();
        sessions.values().filter_map(|s| s.current.lock().clone()).collect()
    }

    /// Queue a message for its session, starting the session's worker if
    /// needed; `Busy` when the session already has a full queue.
    pub(super) fn enqueue(self: &Arc<Self>, agent: &str, session_key: String, mut q: Queued) -> Result<(), Busy> {
        let bound = self.runtime.config().limits.session_queue.max(1) as usize;
        let mut sessions = self.sessions.lock();
        let session = sessions.entry(session_key.clone()).or_insert_with(|| {
            // One more than the bound: the worker may hold one message read
            // ahead while the count still has it.
            let (tx, rx) = mpsc::channel(bound + 1);
            let current = Arc::new(Mutex::new(None));
            tokio::spawn(
                self.clone()
                    .worker(agent.to_string(), session_key.clone(), rx, current.clone()),
            );
            Session {
                queue: tx,
                waiting: Arc::new(AtomicUsize::new(0)),
                current,
            }
        });
        // A reload may have lowered the bound below the channel's size.
        if session.waiting.load(Ordering::Relaxed) >= bound {
            return Err(Busy(Box::new(q)));
        }
        session.waiting.fetch_add(1, Ordering::Relaxed);
        q.seat = Some(Seat(session.waiting.clone()));
        session.queue.try_send(q).map_err(|e| {
            let mut q = e.into_inner();
            q.seat = None;
            Busy(Box::new(q))
        })
    }

    /// The next message, or `None` once the session has been idle long
    /// enough to leave memory (at once by default: everything a turn needs
    /// is read back from the store). The session is removed under the sessions
    /// lock, which `enqueue` holds while sending: no message is left behind.
    async fn next(&self, session_key: &str, queue: &mut mpsc::Receiver<Queued>) -> Option<Queued> {
        let idle = Duration::from_secs(self.runtime.config().limits.idle_session_secs);
        loop {
            let waited = if idle.is_zero() {
                match queue.try_recv() {
                    Ok(q) => return Some(q),
                    Err(mpsc::error::TryRecvError::Disconnected) => return None,
                    Err(mpsc::error::TryRecvError::Empty) => false,
                }
            } else {
                match tokio::time::timeout(idle, queue.recv()).await {
                    Ok(q) => return q,
                    Err(_) => true,
                }
            };
            let mut sessions = self.sessions.lock();
            if queue.is_empty() {
                sessions.remove(session_key);
                if waited {
                    tracing::info!(session = %session_key, "idle session left memory");
                }
                return None;
            }
        }
    }

    async fn worker(
        self: Arc<Self>,
        agent: String,
        session_key: String,
        mut queue: mpsc::Receiver<Queued>,
        current: Current,
    ) {
        // A message that could not join the last turn (see `merge`).
        let mut held: Option<Queued> = None;
        loop {
            let q = match held.take() {
                Some(q) => q,
                None => match self.next(&session_key, &mut queue).await {
                    Some(q) => q,
                    None => break,
                },
            };
            // No longer waiting: its seat is given back now.
            let Queued { mut t, follow_up, seat } = q;
            drop(seat);
            if !t.held_here(self.runtime.store()) {
                // Waiting here when the others took this process for dead.
                tracing::warn!(key = %t.key, "a message waiting here was adopted by another gateway; not run here");
                self.statuses.forget(&t);
                continue;
            }
            // A voice message is heard first: it may be a spoken command.
            let config = self.runtime.config();
            if follow_up.is_none() && crate::messages::voice::audio_of(&config, &t.m).is_some() {
                let heard = crate::messages::voice::hear(&config, &self.channels, &mut t).await;
                if let Some(command) = heard.command {
                    self.statuses.ended(&t, MessageStatus::Done);
                    tokio::spawn(self.clone().command(t, command));
                    continue;
                }
            }
            let (t, earlier) = match follow_up {
                None => self.gather(&session_key, t, &mut queue, &mut held).await,
                Some(_) => (t, Vec::new()),
            };
            // Sent away while the message waited (`/unpair`, a reload that
            // took them off a list): not run (fail closed).
            if !crate::messages::pairing::still_admitted(self.runtime.store(), &self.runtime.config(), &t).await {
                tracing::warn!(session = %session_key, sender = %t.m.sender, "a queued message's sender may no longer talk here; not answered");
                self.statuses.ended(&t, MessageStatus::Failed);
                if let Err(e) = self.runtime.store().inbox().finish_turn(&t.key, &t.merged, None).await {
                    tracing::error!(error = %e, "cannot close a message that will not be answered");
                }
                continue;
            }
            if t.recovered {
                match self.answered_from_record(&session_key, &t, follow_up.as_deref()).await {
                    Recovered::Answered(ended) => {
                        self.statuses.ended(&t, ended);
                        continue;
                    }
                    Recovered::HeldUp => {
                        let mut held_up = earlier;
                        held_up.push(t);
                        self.clone().put_back(held_up, false);
                        continue;
                    }
                    Recovered::Rerun => {}
                }
            }
            let lane = (&mut queue, &mut held);
            let held_up = self
                .turn(&agent, &session_key, (t, earlier), follow_up, (&current, lane))
                .await;
            if !held_up.0.is_empty() {
                self.clone().put_back(held_up.0, held_up.1);
            }
        }
    }

    /// Run one message's turn and answer it (in place when it was streamed).
    /// One taken message's turn in a trace of its own (see `turn_traced`).
    /// Returns the messages to run again once the database takes writes
    /// (see `put_back`), in the order they came, and whether the person
    /// was told in place; none when answered.
    async fn turn(
        &self,
        agent: &str,
        session_key: &str,
        t: (Taken, Vec<Taken>),
        follow_up: Option<String>,
        running: (&Current, Lane<'_>),
    ) -> HeldUp {
        let queued_ms = self.runtime.store().now_ms().saturating_sub(t.0.received_at);
        let span = tracing::info_span!(
            parent: None,
            "message",
            channel = %t.0.m.address.channel,
            agent,
            direct = t.0.m.direct,
            queued_ms,
            outcome = tracing::field::Empty,
            trace_id = tracing::field::Empty,
        );
        if let Some(id) = switchboard_telemetry::traces::trace_id(&span) {
            span.record("trace_id", tracing::field::display(&id));
        }
        tracing::Instrument::instrument(self.turn_traced(agent, session_key, t, follow_up, running), span).await
    }

    /// Whether the others took this process for dead since `t` was dequeued
    /// (asked once the turn is `current`: the heartbeat moves the life on
    /// before it stops the turns then running). The turn is the adopter's
    /// then, and shows nothing here.
    fn adopted_meanwhile(&self, t: &Taken, earlier: &[Taken], current: &Current) -> bool {
        if t.held_here(self.runtime.store()) {
            return false;
        }
        current.lock().take();
        earlier.iter().chain([t]).for_each(|t| self.statuses.forget(t));
        true
    }

    /// What the console and `/stop` see of the turn starting for `t`
    /// (the route it was taken by).
    fn turn_now(
        &self,
        (agent, session_key): (&str, &str),
        t: &Taken,
        cancel: &CancellationToken,
        follow_up: Option<String>,
    ) -> TurnNow {
        TurnNow {
            cancel: cancel.clone(),
            owner: t.m.sender.clone(),
            agent: agent.to_string(),
            session_key: session_key.to_string(),
            address: t.m.address.clone(),
            route: t.route.as_ref().map(|r| r.why.clone()).unwrap_or_default(),
            started_at: self.runtime.store().now_ms(),
            follow_up,
        }
    }

    /// The turn's messages with their files fetched, saved and described
    /// (see `files::inbound`): the last one, and the texts of the earlier
    /// ones of a merged burst (their pictures go with the last one's).
    async fn prepared(
        &self,
        agent: &str,
        t: &Taken,
        earlier: &[Taken],
    ) -> (crate::messages::files::inbound::Prepared, Vec<String>) {
        use crate::messages::files::inbound::prepare;
        let mut files = prepare(&self.runtime, &self.channels, agent, &t.m, &t.key).await;
        let mut texts = Vec::with_capacity(earlier.len());
        for e in earlier {
            let f = prepare(&self.runtime, &self.channels, agent, &e.m, &e.key).await;
            texts.push(f.text);
            files.images.extend(f.images);
        }
        (files, texts)
    }

    async fn turn_traced(
        &self,
        agent: &str,
        session_key: &str,
        (mut t, mut earlier): (Taken, Vec<Taken>),
        follow_up: Option<String>,
        (current, lane): (&Current, Lane<'_>),
    ) -> HeldUp {
        let _in_hand = InHand::count(&self.in_hand);
        let m = &t.m.clone();
        let cancel = CancellationToken::new();
        let started = std::time::Instant::now();
        // A follow-up's message is the `/subagents send` command's, taken by
        // the chat's route.
        let asked_from = follow_up
            .as_ref()
            .and_then(|_| t.agent().map(|a| t.m.address.session_key(a)));
        *current.lock() = Some(self.turn_now((agent, session_key), &t, &cancel, asked_from));
        if self.adopted_meanwhile(&t, &earlier, current) {
            return HeldUp::none();
        }
        self.statuses.working(&t);
        self.runtime
            .store()
            .changed(switchboard_store::Change::Turn(session_key.to_string()));
        // Typing shows while a turn that takes a while runs (an answer
        // within `TYPING_AFTER` needs none, and costs no request for it;
        // platforms let it lapse after a few seconds, so it is renewed),
        // without delaying the turn.
        let typing = super::typing::show(&self.channels, m);
        let broker: Arc<dyn ApprovalBroker> = match &follow_up {
            Some(_) => Arc::new(NoApprover(
                "a follow-up turn of a finished child has no operator".into(),
            )),
            None => self.broker.clone(),
        };
        // The answer is shown while it is written where the channel
        // can edit and the configuration wants it (not for follow-ups,
        // whose answer carries a prefix).
        let (events, feeder) = match self.stream_for(m).filter(|_| follow_up.is_none()) {
            Some(s) => {
                let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
                (Some(tx), Some(tokio::spawn(s.feed(rx))))
            }
            None => (None, None),
        };
        // Its files fetched, saved and described (see `files::inbound`).
        let (files, earlier_texts) = self.prepared(agent, &t, &earlier).await;
        // The record of a turn is kept under its first message's key (see
        // `merge::room`).
        let tag = earlier.first().unwrap_or(&t).key.clone();
        let request = TurnRequest {
            agent: agent.to_string(),
            session_key: session_key.to_string(),
            origin: Some(m.address.clone()),
            sender: Some(m.sender.to_string()),
            text: files.text,
            earlier: earlier_texts,
            broker,
            cancel,
            events,
            turn: Some(tag),
            images: files.images,
            joins: None,
        };
        let result = self.run_joined(request, (&mut t, &mut earlier), lane).await;
        let streamed = match feeder {
            Some(f) => f.await.ok().filter(crate::messages::stream_out::StreamOut::has_shown),
            None => None,
        };
        current.lock().take();
        self.runtime
            .store()
            .changed(switchboard_store::Change::Turn(session_key.to_string()));
        if let Some(typing) = typing {
            typing.abort();
        }
        if let (Err(TurnError::Store(e)), None) = (&result, &follow_up)
            && e.is_unavailable()
        {
            earlier.push(t);
            return self.held_up(earlier, e, streamed).await;
        }
        self.conclude(agent, &t, result, streamed, (follow_up.as_deref(), started))
            .await;
        HeldUp::none()
    }

    /// Record how `t`'s turn ended and give the person its answer: in
    /// place where it was streamed, else as a reply (a follow-up's with
    /// its prefix).
    async fn conclude(
        &self,
        agent: &str,
        t: &Taken,
        result: Result<TurnReply, TurnError>,
        streamed: Option<crate::messages::stream_out::StreamOut>,
        (follow_up, started): (Option<&str>, std::time::Instant),
    ) {
        let stopped = matches!(result, Err(TurnError::Cancelled));
        let outcome = match &result {
            Ok(_) => "ok",
            Err(TurnError::Cancelled) => "stopped",
            Err(_) => "failed",
        };
        switchboard_telemetry::metrics::turn_finished(agent, outcome, started.elapsed().as_secs_f64());
        self.statuses.ended(t, MessageStatus::ended(result.is_ok()));
        tracing::Span::current().record("outcome", outcome);
        let text = match result {
            Ok(reply) if reply.text.trim().is_empty() => "(the agent gave no answer)".to_string(),
            Ok(reply) => reply.text,
            Err(TurnError::Cancelled) => "(stopped)".to_string(),
            // Never the database's own words (a follow-up's turn is not
            // put back: it has no message of its own to keep).
            Err(TurnError::Store(e)) if e.is_unavailable() => {
                tracing::error!(error = %e, remedy = crate::messages::storage_down::remedy(&e), "a turn could not be recorded");
                crate::messages::storage_down::WAITS.to_string()
            }
            Err(e) => format!("error: {e}"),
        };
        if let Some(s) = streamed {
            let shown = if stopped {
                s.stopped().await
            } else {
                s.finish(&text).await
            };
            if shown {
                crate::messages::reply::answered_in_place(self.runtime.store(), t).await;
                return;
            }
        }
        let reply = tracing::info_span!("reply");
        tracing::Instrument::instrument(self.answer(t, with_prefix(follow_up, text)), reply).await;
    }
}

/// A follow-up turn's answer starts with its prefix (see `Queued`).
fn with_prefix(prefix: Option<&str>, text: String) -> String {
    match prefix {
        Some(prefix) => format!("{prefix}{text}"),
        None => text,
    }
}

/// One turn counted in `Router::in_hand` for as long as it is handled
/// (however it ends: answered, failed or cut).
struct InHand<'a>(&'a std::sync::atomic::AtomicUsize);

impl<'a> InHand<'a> {
    fn count(n: &'a std::sync::atomic::AtomicUsize) -> Self {
        n.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        Self(n)
    }
}

impl Drop for InHand<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}
