//! Showing an answer in a chat while the model writes it (`streaming =
//! "edit"`): the first words are posted as one message, which is edited as
//! the answer grows — never more often than the channel's edit interval,
//! and only for answers still being written 200 ms after their first words
//! (a quick answer arrives as one message),
//! which doubles on every rate-limit answer instead of retrying each edit.
//! An answer longer than one message continues in a new message; a
//! finished part is not edited again. At the end the messages show exactly
//! the final answer (one last edit, nothing sent twice); a stopped turn's
//! message says it was stopped. When the platform refuses edits, the
//! stream stops and the answer goes out the ordinary way.
//!
//! Where the channel shows drafts (Telegram's `sendMessageDraft`, in direct
//! chats), the growing answer is a draft instead — the latest part of it,
//! within the same interval — and nothing is posted until the end, when
//! the answer goes out once, the ordinary way. A refused draft switches
//! the stream to the edited message.

use std::sync::Arc;
use std::time::Duration;
use switchboard_core::{Channel, ChannelError, ChatAddress, MessageRef, Outbound, StreamLimits, split_message};
use switchboard_runtime::TurnEvent;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::Instant;

/// How long after its first words an answer is posted: one that is
/// finished by then is sent whole, as one message, without edits.
const FIRST_POST_AFTER: Duration = Duration::from_millis(200);

/// The longest the edit interval grows after rate limits.
const MAX_INTERVAL: Duration = Duration::from_secs(30);

/// One answer being shown.
pub(crate) struct StreamOut {
    channel: Arc<dyn Channel>,
    address: ChatAddress,
    reply_to: Option<String>,
    limits: StreamLimits,
    /// The answer so far.
    text: String,
    /// Posted messages and the text each shows.
    shown: Vec<(MessageRef, String)>,
    /// When the platform may be asked again.
    next_at: Instant,
    interval: Duration,
    /// The platform refused: the ordinary reply takes over.
    broken: bool,
    /// Shown as this draft (and the text it shows) rather than messages.
    draft: Option<(u64, String)>,
}

impl StreamOut {
    /// A stream of an answer to `reply_to` in `address`; `direct` for a
    /// one-to-one chat (where drafts may be used).
    pub(crate) fn new(
        channel: Arc<dyn Channel>,
        (address, direct): (ChatAddress, bool),
        reply_to: Option<String>,
        limits: StreamLimits,
    ) -> Self {
        // Draft ids are non-zero; each answer has its own.
        let draft = (limits.drafts && direct).then(|| (u64::from(rand_id()), String::new()));
        Self {
            channel,
            address,
            reply_to,
            limits,
            text: String::new(),
            shown: Vec::new(),
            next_at: Instant::now(),
            interval: limits.min_interval,
            broken: false,
            draft,
        }
    }

    /// Whether any of the answer is on screen (then the stream owns it).
    /// A draft posts nothing: the answer is still to be sent.
    pub(crate) fn has_shown(&self) -> bool {
        !self.shown.is_empty() && !self.broken && self.draft.is_none()
    }

    /// Follow a turn's events until the turn ends (its sender is dropped).
    pub(crate) async fn feed(mut self, mut events: UnboundedReceiver<TurnEvent>) -> Self {
        let mut dirty = false;
        loop {
            let due = self.next_at;
            tokio::select! {
                event = events.recv() => match event {
                    Some(TurnEvent::Text(piece)) => {
                        if self.shown.is_empty() && self.text.is_empty() && !dirty {
                            self.next_at = Instant::now() + FIRST_POST_AFTER;
                        }
                        self.text.push_str(&piece);
                        dirty = true;
                    }
                    // Tools come next (or another provider starts over):
                    // what follows replaces this text, in the same messages.
                    Some(TurnEvent::TextReset) => self.text.clear(),
                    Some(_) => {}
                    None => return self,
                },
                () = tokio::time::sleep_until(due), if dirty && !self.broken => {
                    self.show().await;
                    dirty = false;
                }
            }
        }
    }

    /// The first part of the text that the messages do not show yet (its
    /// index and text); `None` when they show all of it.
    fn next_change(&self) -> Option<(usize, String)> {
        split_message(&self.text, self.limits.max_len)
            .into_iter()
            .enumerate()
            .find(|(i, p)| self.shown.get(*i).is_none_or(|(_, s)| s != p))
    }

    /// Bring the messages (or the draft) up to the text (one platform call
    /// at most, then wait for the interval).
    async fn show(&mut self) {
        if let Some((id, _)) = self.draft {
            return self.show_draft(id).await;
        }
        let Some((i, part)) = self.next_change() else {
            return;
        };
        let result = match self.shown.get(i) {
            Some((message, _)) => self.channel.edit_message(message, &part).await.map(|()| None),
            None => {
                let mut out = Outbound::new(self.address.clone(), part.clone());
                out.reply_to = if i == 0 { self.reply_to.clone() } else { None };
                self.channel.send(&out).await.map(|refs| refs.into_iter().next())
            }
        };
        let now = Instant::now();
        match result {
            Ok(sent) => {
                match (sent, self.shown.get_mut(i)) {
                    (Some(message), None) => self.shown.push((message, part)),
                    (None, Some(slot)) => slot.1 = part,
                    // A send that gave no message to edit later.
                    _ => self.broken = true,
                }
                self.next_at = now + self.interval;
            }
            Err(e @ (ChannelError::RateLimited(_) | ChannelError::Transient(_))) => self.wait_more(&e),
            Err(e) => {
                tracing::warn!(channel = %self.address.channel, error = %e, "streaming stopped; the answer is sent whole");
                self.broken = true;
            }
        }
    }

    /// Bring draft `id` up to the part of the text being written; a refused
    /// draft switches the stream to messages.
    async fn show_draft(&mut self, id: u64) {
        let Some(last) = split_message(&self.text, self.limits.max_len).pop() else {
            return;
        };
        if self.draft.as_ref().is_some_and(|(_, drafted)| *drafted == last) {
            return;
        }
        match self.channel.draft(&self.address, id, &last).await {
            Ok(()) => {
                self.draft = Some((id, last));
                self.next_at = Instant::now() + self.interval;
            }
            Err(ChannelError::Unsupported(_) | ChannelError::Permanent(_)) => {
                tracing::info!(channel = %self.address.channel, "drafts refused; the answer is shown as a message edited instead");
                self.draft = None;
                self.next_at = Instant::now();
            }
            Err(e) => self.wait_more(&e),
        }
    }

    /// After a rate limit or a transient failure: update half as often.
    fn wait_more(&mut self, e: &ChannelError) {
        self.interval = (self.interval * 2).min(MAX_INTERVAL);
        let asked = match e {
            ChannelError::RateLimited(secs) => Duration::from_secs(*secs),
            _ => Duration::ZERO,
        };
        self.next_at = Instant::now() + self.interval.max(asked);
        tracing::info!(channel = %self.address.channel, interval = ?self.interval, error = %e, "a streamed update was refused for now; updating less often");
    }

    /// Make the messages show exactly `answer`. False when they could not,
    /// or when a draft showed it (the caller then sends it the ordinary way).
    pub(crate) async fn finish(mut self, answer: &str) -> bool {
        if self.draft.is_some() {
            return false;
        }
        self.text = answer.to_string();
        let parts = split_message(answer, self.limits.max_len).len();
        // Parts beyond the answer (after a reset to a shorter text) keep
        // saying they are empty rather than showing stale words.
        let extra: Vec<MessageRef> = self.shown.iter().skip(parts).map(|(m, _)| m.clone()).collect();
        for _ in 0..(parts + 8) {
            if self.broken {
                return false;
            }
            if self.next_change().is_none() {
                for m in &extra {
                    let _ = self.channel.edit_message(m, "…").await;
                }
                return true;
            }
            tokio::time::sleep_until(self.next_at).await;
            self.show().await;
        }
        false
    }

    /// The turn was stopped: the message says so under what was shown.
    pub(crate) async fn stopped(self) -> bool {
        if self.draft.is_some() {
            return false;
        }
        let Some((message, text)) = self.shown.last() else {
            return false;
        };
        tokio::time::sleep_until(self.next_at).await;
        let note = format!("{text}\n\n(stopped)");
        self.channel.edit_message(message, &note).await.is_ok()
    }
}

/// A draft id: non-zero, different for each answer (Telegram animates
/// changes of one id, so two answers must not share it).
fn rand_id() -> u32 {
    let seed = uuid::Uuid::new_v4().as_u128();
    (seed as u32).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use async_trait::async_trait;
    use parking_lot::Mutex;
    use switchboard_core::{ApprovalPrompt, Intake, PromptEdit};

    /// A platform recording what it is asked: it may rate-limit the first
    /// edit, and it shows drafts unless told to refuse them.
    #[derive(Default)]
    struct Recorder {
        limit_first_edit: bool,
        refuse_drafts: bool,
        calls: Mutex<Vec<(Instant, String)>>,
        limited: Mutex<bool>,
    }

    impl Recorder {
        fn calls(&self) -> Vec<String> {
            self.calls.lock().iter().map(|c| c.1.clone()).collect()
        }
        fn record(&self, call: String) {
            self.calls.lock().push((Instant::now(), call));
        }
    }

    #[async_trait]
    impl Channel for Recorder {
        fn name(&self) -> &str {
            "local.test"
        }
        async fn start(&self, _intake: Arc<dyn Intake>) -> Result<(), ChannelError> {
            Ok(())
        }
        async fn send(&self, message: &Outbound) -> Result<Vec<MessageRef>, ChannelError> {
            self.record(format!("send:{}", message.text));
            Ok(vec![MessageRef {
                chat: "c".into(),
                id: "m1".into(),
            }])
        }
        async fn send_approval_prompt(&self, _: &ChatAddress, _: &ApprovalPrompt) -> Result<MessageRef, ChannelError> {
            Err(ChannelError::Unsupported("prompts"))
        }
        async fn update_approval_prompt(&self, _: &PromptEdit<'_>) -> Result<(), ChannelError> {
            Ok(())
        }
        async fn edit_message(&self, _message: &MessageRef, text: &str) -> Result<(), ChannelError> {
            let mut limited = self.limited.lock();
            if self.limit_first_edit && !*limited {
                *limited = true;
                return Err(ChannelError::RateLimited(0));
            }
            self.record(format!("edit:{text}"));
            Ok(())
        }
        async fn draft(&self, _address: &ChatAddress, id: u64, text: &str) -> Result<(), ChannelError> {
            if self.refuse_drafts {
                return Err(ChannelError::Permanent("Not Found".into()));
            }
            self.record(format!("draft{id}:{text}"));
            Ok(())
        }
    }

    /// Stream `words` words `every` apart into a direct chat of `channel`
    /// (edits at most every 100 ms); the stream and the whole answer.
    async fn stream(channel: Arc<Recorder>, drafts: bool, words: usize, every: u64) -> (StreamOut, String) {
        let limits = StreamLimits {
            max_len: 10_000,
            min_interval: Duration::from_millis(100),
            drafts,
        };
        let out = StreamOut::new(channel, (ChatAddress::new("local.test", "c"), true), None, limits);
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let feeder = tokio::spawn(out.feed(rx));
        let mut answer = String::new();
        for i in 0..words {
            let piece = format!("w{i} ");
            answer.push_str(&piece);
            tx.send(TurnEvent::Text(piece)).unwrap();
            tokio::time::sleep(Duration::from_millis(every)).await;
        }
        drop(tx);
        (feeder.await.unwrap(), answer.trim_end().to_string())
    }

    #[tokio::test]
    async fn a_rate_limit_halves_the_edit_rate_and_the_end_is_exact() {
        let flaky = Arc::new(Recorder {
            limit_first_edit: true,
            ..Recorder::default()
        });
        let (out, answer) = stream(flaky.clone(), false, 60, 20).await;
        assert!(out.has_shown());
        assert!(out.finish(&answer).await);
        let calls = flaky.calls();
        assert!(calls[0].starts_with("send:"), "{calls:?}");
        assert_eq!(calls.last().unwrap(), &format!("edit:{answer}"));
        assert_eq!(calls.iter().filter(|c| c.starts_with("send:")).count(), 1);
        // After the rate limit, edits come at least 200 ms apart.
        let timed = flaky.calls.lock().clone();
        let edits: Vec<Instant> = timed.iter().filter(|c| c.1.starts_with("edit:")).map(|c| c.0).collect();
        for pair in edits.windows(2) {
            assert!(
                pair[1] - pair[0] >= Duration::from_millis(190),
                "{:?}",
                pair[1] - pair[0]
            );
        }
    }

    #[tokio::test]
    async fn a_direct_answer_grows_as_a_draft_and_nothing_is_posted_until_the_end() {
        let channel = Arc::new(Recorder::default());
        let (out, answer) = stream(channel.clone(), true, 40, 15).await;
        assert!(!out.has_shown(), "a draft is not the answer: it is still to be sent");
        assert!(!out.finish(&answer).await);
        let calls = channel.calls();
        assert!(calls.len() >= 2, "{calls:?}");
        let id = calls[0].split(':').next().unwrap().to_string();
        for c in &calls {
            let (who, text) = c.split_once(':').unwrap();
            assert_eq!(who, id, "one draft id, never a message: {calls:?}");
            assert!(answer.starts_with(text.trim_end()), "{text}");
        }
    }

    #[tokio::test]
    async fn a_refused_draft_falls_back_to_one_message_edited() {
        let channel = Arc::new(Recorder {
            refuse_drafts: true,
            ..Recorder::default()
        });
        let (out, answer) = stream(channel.clone(), true, 40, 15).await;
        assert!(out.has_shown());
        assert!(out.finish(&answer).await);
        let calls = channel.calls();
        assert!(calls[0].starts_with("send:"), "{calls:?}");
        assert_eq!(calls.iter().filter(|c| c.starts_with("send:")).count(), 1);
        assert_eq!(calls.last().unwrap(), &format!("edit:{answer}"));
    }
}
