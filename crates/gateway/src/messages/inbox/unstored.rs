//! Messages the inbox could not store (the database's volume full or
//! read-only, or the database away): the channel offers them again until
//! they are stored, so nothing is lost; meanwhile each chat that wrote is
//! told once that its message waits, and the log says what to fix
//! (`storage_down`; docs/operations.md, "A full disk").

use parking_lot::Mutex;
use std::collections::HashSet;
use switchboard_core::Inbound;

/// The chats told during the failure under way, by channel, and the
/// channels failing.
#[derive(Default)]
pub(super) struct Unstored {
    told: Mutex<HashSet<(String, String)>>,
    failing: Mutex<HashSet<String>>,
}

impl Unstored {
    /// Of `messages` (not stored on `channel`), those whose chat was not
    /// told yet in this failure; from now on it has been.
    pub(super) fn first_in_chat<'m>(
        &self,
        channel: &str,
        messages: impl Iterator<Item = &'m Inbound>,
    ) -> Vec<&'m Inbound> {
        let mut told = self.told.lock();
        messages
            .filter(|m| told.insert((channel.to_string(), m.address.chat.clone())))
            .collect()
    }

    /// Whether this is `channel`'s first failure since it last stored
    /// (the log says it once).
    pub(super) fn first_failure(&self, channel: &str) -> bool {
        self.failing.lock().insert(channel.to_string())
    }

    /// `channel`'s messages are stored again: a later failure tells anew.
    pub(super) fn stored(&self, channel: &str) {
        let mut told = self.told.lock();
        if !told.is_empty() {
            told.retain(|(c, _)| c != channel);
        }
        drop(told);
        let mut failing = self.failing.lock();
        if failing.remove(channel) {
            tracing::info!(%channel, "the inbox takes messages again");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_chat_is_told_once_per_failure() {
        let u = Unstored::default();
        let m = |chat: &str| {
            Inbound::new(
                switchboard_core::ChatAddress::new("telegram.main", chat),
                switchboard_core::UserId("tg:1".into()),
                "hi",
            )
        };
        let (a, b) = (m("1"), m("2"));
        assert_eq!(u.first_in_chat("telegram.main", [&a, &a, &b].into_iter()).len(), 2);
        assert!(u.first_in_chat("telegram.main", [&a, &b].into_iter()).is_empty());
        u.stored("telegram.main");
        assert_eq!(u.first_in_chat("telegram.main", [&a].into_iter()).len(), 1);
        assert!(u.first_failure("telegram.main"));
        assert!(!u.first_failure("telegram.main"), "logged once per failure");
        u.stored("telegram.main");
        assert!(u.first_failure("telegram.main"));
    }
}
