//! What the adapter's parts share while it runs: the bot's id, the cursor,
//! what is known of each channel (a DM, a channel, a thread and whose), and
//! the way to the gateway's intake.

use crate::cursor::Cursor;
use crate::inbound::Place;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use switchboard_core::{Inbound, Intake, IntakeError};

/// Channels remembered (their kind does not change).
const KNOWN: usize = 10_000;
/// Thread names prepared for conversations not answered yet.
const NAMES: usize = 1000;

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
    known: Mutex<HashMap<u64, Known>>,
    names: Mutex<HashMap<u64, String>>,
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
            known: Mutex::new(HashMap::new()),
            names: Mutex::new(HashMap::new()),
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
        let mut known = self.known.lock();
        if known.len() >= KNOWN {
            known.clear();
        }
        known.insert(channel, k);
    }

    /// How a message in a channel of this kind is addressed.
    pub(crate) fn place(&self, channel: u64, kind: Kind) -> Place {
        match kind {
            Kind::Dm => Place::Dm,
            Kind::Channel => Place::Channel,
            Kind::Thread { parent, owner } => Place::Thread {
                parent,
                bot_thread: owner == Some(self.bot()) || self.cursor.lock().threads.contains(&channel),
            },
        }
    }

    /// Keep a name for the thread a conversation starting at `message` gets.
    pub(crate) fn name_thread(&self, message: u64, name: String) {
        let mut names = self.names.lock();
        if names.len() >= NAMES {
            names.clear();
        }
        names.insert(message, name);
    }

    pub(crate) fn thread_name(&self, message: u64) -> String {
        self.names
            .lock()
            .get(&message)
            .cloned()
            .unwrap_or_else(|| "Conversation".into())
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
