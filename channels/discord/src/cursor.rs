//! What the adapter keeps in the control plane (as its channel cursor, so
//! it moves in the same transaction as the messages it covers): the last
//! message id seen per channel (where to catch up after a new gateway
//! session), the threads the bot answers in (their messages need no
//! mention), and the fingerprint of the registered application commands.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Channels whose last message id is kept (the most recently active).
const CHANNELS: usize = 200;
/// Threads remembered as the bot's.
const THREADS: usize = 2000;

/// The adapter's resume state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Cursor {
    /// Channel (or thread) id → the newest message id taken from it.
    pub last: BTreeMap<u64, u64>,
    /// Threads the bot answers in.
    pub threads: BTreeSet<u64>,
    /// Fingerprint of the registered application commands.
    pub commands: Option<String>,
}

impl Cursor {
    /// Read a stored cursor; a missing or unreadable one starts empty (an
    /// unreadable one is logged by the caller).
    pub(crate) fn parse(stored: Option<&str>) -> Result<Self, serde_json::Error> {
        stored.map_or(Ok(Self::default()), serde_json::from_str)
    }

    /// Its stored form.
    pub(crate) fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// `message` was seen in `channel` (kept when newer than what is known).
    pub(crate) fn saw(&mut self, channel: u64, message: u64) {
        let entry = self.last.entry(channel).or_insert(0);
        *entry = (*entry).max(message);
        if self.last.len() > CHANNELS {
            // Forget the channel whose newest message is the oldest.
            if let Some((&quiet, _)) = self.last.iter().min_by_key(|(_, m)| **m) {
                self.last.remove(&quiet);
            }
        }
    }

    /// The bot answers in `thread`; true when that is news.
    pub(crate) fn answers_in(&mut self, thread: u64) -> bool {
        let new = self.threads.insert(thread);
        while self.threads.len() > THREADS {
            // Snowflakes grow with time: the smallest is the oldest thread.
            self.threads.pop_first();
        }
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_bounds() {
        let mut c = Cursor::default();
        for ch in 0..(CHANNELS as u64 + 5) {
            c.saw(ch, 1000 + ch);
        }
        c.saw(7, 5);
        assert_eq!(c.last.len(), CHANNELS);
        assert!(!c.last.contains_key(&0), "the quietest channel is forgotten");
        assert_eq!(c.last[&7], 1007, "an older id never moves a channel back");
        assert!(c.answers_in(9));
        assert!(!c.answers_in(9));
        c.commands = Some("abc".into());
        assert_eq!(Cursor::parse(Some(&c.to_json())).unwrap(), c);
        assert_eq!(Cursor::parse(None).unwrap(), Cursor::default());
        assert!(Cursor::parse(Some("not json")).is_err());
    }
}
