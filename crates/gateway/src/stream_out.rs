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
}

impl StreamOut {
    pub(crate) fn new(
        channel: Arc<dyn Channel>,
        address: ChatAddress,
        reply_to: Option<String>,
        limits: StreamLimits,
    ) -> Self {
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
        }
    }

    /// Whether any of the answer is on screen (then the stream owns it).
    pub(crate) fn has_shown(&self) -> bool {
        !self.shown.is_empty() && !self.broken
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

    /// Bring the messages up to the text (one platform call at most, then
    /// wait for the interval).
    async fn show(&mut self) {
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
            Err(ChannelError::RateLimited(secs)) => {
                self.interval = (self.interval * 2).min(MAX_INTERVAL);
                self.next_at = now + self.interval.max(Duration::from_secs(secs));
                tracing::info!(channel = %self.address.channel, interval = ?self.interval, "edits rate limited; editing less often");
            }
            Err(ChannelError::Transient(e)) => {
                self.interval = (self.interval * 2).min(MAX_INTERVAL);
                self.next_at = now + self.interval;
                tracing::warn!(channel = %self.address.channel, error = %e, "a streamed update failed; trying later");
            }
            Err(e) => {
                tracing::warn!(channel = %self.address.channel, error = %e, "streaming stopped; the answer is sent whole");
                self.broken = true;
            }
        }
    }

    /// Make the messages show exactly `answer`. False when they could not
    /// (the caller then sends it the ordinary way).
    pub(crate) async fn finish(mut self, answer: &str) -> bool {
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
        let Some((message, text)) = self.shown.last() else {
            return false;
        };
        tokio::time::sleep_until(self.next_at).await;
        let note = format!("{text}\n\n(stopped)");
        self.channel.edit_message(message, &note).await.is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use async_trait::async_trait;
    use parking_lot::Mutex;
    use switchboard_core::{ApprovalPrompt, Intake, PromptEdit};

    /// A platform that rate-limits the first edit and records the rest.
    #[derive(Default)]
    struct Flaky {
        calls: Mutex<Vec<(Instant, String)>>,
        limited: Mutex<bool>,
    }

    #[async_trait]
    impl Channel for Flaky {
        fn name(&self) -> &str {
            "local.test"
        }
        async fn start(&self, _intake: Arc<dyn Intake>) -> Result<(), ChannelError> {
            Ok(())
        }
        async fn send(&self, message: &Outbound) -> Result<Vec<MessageRef>, ChannelError> {
            self.calls
                .lock()
                .push((Instant::now(), format!("send:{}", message.text)));
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
            if !*limited {
                *limited = true;
                return Err(ChannelError::RateLimited(0));
            }
            self.calls.lock().push((Instant::now(), format!("edit:{text}")));
            Ok(())
        }
    }

    #[tokio::test]
    async fn a_rate_limit_halves_the_edit_rate_and_the_end_is_exact() {
        let flaky = Arc::new(Flaky::default());
        let limits = StreamLimits {
            max_len: 10_000,
            min_interval: Duration::from_millis(100),
        };
        let out = StreamOut::new(flaky.clone(), ChatAddress::new("local.test", "c"), None, limits);
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let feeder = tokio::spawn(out.feed(rx));
        let mut answer = String::new();
        for i in 0..60 {
            let piece = format!("w{i} ");
            answer.push_str(&piece);
            tx.send(TurnEvent::Text(piece)).unwrap();
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        drop(tx);
        let out = feeder.await.unwrap();
        assert!(out.has_shown());
        assert!(out.finish(answer.trim_end()).await);
        let calls = flaky.calls.lock().clone();
        assert!(calls[0].1.starts_with("send:"), "{calls:?}");
        assert_eq!(calls.last().unwrap().1, format!("edit:{}", answer.trim_end()));
        assert_eq!(calls.iter().filter(|c| c.1.starts_with("send:")).count(), 1);
        // After the rate limit, edits come at least 200 ms apart.
        let edits: Vec<Instant> = calls.iter().filter(|c| c.1.starts_with("edit:")).map(|c| c.0).collect();
        for pair in edits.windows(2) {
            assert!(
                pair[1] - pair[0] >= Duration::from_millis(190),
                "{:?}",
                pair[1] - pair[0]
            );
        }
    }
}
