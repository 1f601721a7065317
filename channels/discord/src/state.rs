//! What the adapter's parts share while it runs: the bot's id, the cursor,
//! what is known of each channel (a DM, a channel, a thread and whose), and
//! the way to the gateway's intake.

use crate::cursor::Cursor;
use crate::inbound::Venue;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use switchboard_core::{BoundedMap, Inbound, Intake, IntakeError};

/// Channels remembered (their kind does not change).
const KNOWN: usize = 10_000;
/// Thread names prepared for conversations not answered yet.
const NAMES: usize = 1000;
/// Interactions whose answer is still to come.
const INTERACTIONS: usize = 1000;
/// How long Discord accepts an interaction's token for its answer.
const INTERACTION_VALID: Duration = Duration::from_secs(15 * 60);

/// What a channel is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Dm,
    Channel,
    Thread { parent: u64, owner: Option<u64> },
}

/// A channel as the adapter knows it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Known {
    pub kind: Kind,
    pub guild: Option<u64>,
}

pub(crate) struct Live {
    pub name: String,
    bot: AtomicU64,
    pub cursor: Mutex<Cursor>,
    known: Mutex<BoundedMap<u64, Known>>,
    names: Mutex<BoundedMap<u64, String>>,
    /// Tokens of interactions not answered yet, by interaction id. They
    /// are kept in memory only: a token lets anyone holding it post as
    /// the bot for 15 minutes, so it is never stored or logged.
    interactions: Mutex<BoundedMap<u64, (String, Instant)>>,
    /// Channels where messages were dropped because the receiver fell
    /// behind, with the first dropped message's id (read back later).
    missed: Mutex<BoundedMap<u64, u64>>,
    intake: OnceLock<Arc<dyn Intake>>,
    /// One take at a time, so cursors are written in the order they were read.
    saving: tokio::sync::Mutex<()>,
    /// The gateway connection's shards, to close them on stop.
    pub shards: Mutex<Option<Arc<serenity::gateway::ShardManager>>>,
}

impl Live {
    pub(crate) fn new(name: &str) -> Self {
        Self {
            name: name.to_string(),
            bot: AtomicU64::new(0),
            cursor: Mutex::new(Cursor::default()),
            known: Mutex::new(BoundedMap::new(KNOWN)),
            names: Mutex::new(BoundedMap::new(NAMES)),
            interactions: Mutex::new(BoundedMap::new(INTERACTIONS)),
            missed: Mutex::new(BoundedMap::new(KNOWN)),
            intake: OnceLock::new(),
            saving: tokio::sync::Mutex::new(()),
            shards: Mutex::new(None),
        }
    }

    pub(crate) fn bot(&self) -> u64 {
        self.bot.load(Ordering::Relaxed)
    }

    pub(crate) fn set_bot(&self, id: u64) {
        self.bot.store(id, Ordering::Relaxed);
    }

    pub(crate) fn set_intake(&self, intake: Arc<dyn Intake>) {
        let _ = self.intake.set(intake);
    }

    pub(crate) fn known(&self, channel: u64) -> Option<Known> {
        self.known.lock().get(&channel).copied()
    }

    pub(crate) fn learn(&self, channel: u64, k: Known) {
        self.known.lock().insert(channel, k);
    }

    /// How a message in a channel of this kind is addressed.
    pub(crate) fn place(&self, channel: u64, kind: Kind) -> Venue {
        match kind {
            Kind::Dm => Venue::Dm,
            Kind::Channel => Venue::Channel,
            Kind::Thread { parent, owner } => Venue::Thread {
                parent,
                bot_thread: owner == Some(self.bot()) || self.cursor.lock().threads.contains(&channel),
            },
        }
    }

    /// Keep a name for the thread a conversation starting at `message` gets.
    pub(crate) fn name_thread(&self, message: u64, name: String) {
        self.names.lock().insert(message, name);
    }

    pub(crate) fn thread_name(&self, message: u64) -> String {
        self.names
            .lock()
            .get(&message)
            .cloned()
            .unwrap_or_else(|| "Conversation".into())
    }

    /// Keep an interaction's token until its answer (see `interactions`).
    pub(crate) fn hold_token(&self, interaction: u64, token: &str) {
        self.interactions
            .lock()
            .insert(interaction, (token.to_string(), Instant::now()));
    }

    /// The token to answer `interaction` with, while Discord still takes
    /// it; the first part of an answer keeps it for the follow-ups.
    pub(crate) fn token(&self, interaction: u64) -> Option<String> {
        let held = self.interactions.lock();
        let (token, at) = held.get(&interaction)?;
        (at.elapsed() < INTERACTION_VALID).then(|| token.clone())
    }

    /// A message in `channel` was dropped (the receiver fell behind);
    /// returns true for the first drop since the last read-back.
    pub(crate) fn missed(&self, channel: u64, message: u64) -> bool {
        let mut missed = self.missed.lock();
        let first = missed.is_empty();
        let from = missed.get(&channel).map_or(message, |m| (*m).min(message));
        missed.insert(channel, from);
        first
    }

    /// The channels to read back, each from its first dropped message.
    pub(crate) fn take_missed(&self) -> Vec<(u64, u64)> {
        self.missed.lock().drain()
    }

    /// Hand `batch` to the gateway with the cursor as it is now.
    /// Tell the gateway the connection came (`Ok`) or went (`Err`).
    pub(crate) fn connection(&self, state: Result<(), String>) {
        if let Some(intake) = self.intake.get() {
            intake.connection(&self.name, state);
        }
    }

    pub(crate) async fn take(&self, batch: Vec<Inbound>) -> Result<(), IntakeError> {
        let Some(intake) = self.intake.get() else {
            return Err(IntakeError("the channel is not started".into()));
        };
        let _one = self.saving.lock().await;
        let cursor = self.cursor.lock().to_json();
        intake.take(&self.name, batch, Some(cursor)).await
    }

    /// The bot answers in `thread` from now on (kept across restarts).
    pub(crate) async fn answers_in(&self, thread: u64) {
        let new = self.cursor.lock().answers_in(thread);
        if new && let Err(e) = self.take(Vec::new()).await {
            tracing::warn!(channel = %self.name, error = %e, "cannot record a thread the bot answers in");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropped_messages_are_read_back_from_the_first_per_channel() {
        let live = Live::new("discord.main");
        assert!(live.missed(10, 105), "the first drop is told");
        assert!(!live.missed(10, 103));
        assert!(!live.missed(20, 200));
        assert!(!live.missed(10, 109));
        let mut back = live.take_missed();
        back.sort();
        assert_eq!(back, vec![(10, 103), (20, 200)]);
        assert!(live.take_missed().is_empty());
        assert!(live.missed(10, 300), "told again after a read-back");
    }

    #[test]
    fn interaction_tokens_are_held_in_memory_for_their_answer() {
        let live = Live::new("discord.main");
        assert_eq!(live.token(7), None);
        live.hold_token(7, "secret-token");
        assert_eq!(live.token(7).as_deref(), Some("secret-token"));
        for i in 0..INTERACTIONS as u64 {
            live.hold_token(1000 + i, "t");
        }
        assert_eq!(live.token(7), None, "the oldest is forgotten past the bound");
    }
}
