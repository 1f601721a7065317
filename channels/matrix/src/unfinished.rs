//! Messages whose sending stopped part-way (a long reply split into several
//! events, one of which failed), kept so that the caller's retry of the
//! same message resumes after the parts already posted.

use matrix_sdk::ruma::OwnedTransactionId;
use std::hash::{Hash, Hasher};
use switchboard_core::{BoundedMap, MessageRef, Outbound};

/// More than this many failed messages at once: the oldest are forgotten
/// (their retries then start over).
const CAPACITY: usize = 1024;

/// The parts of one message already posted, and the transaction id of the
/// part that failed (reused, so the homeserver drops it if it did land).
pub(crate) struct Unfinished {
    pub sent: Vec<MessageRef>,
    pub txn: OwnedTransactionId,
}

/// Unfinished messages by `key`.
pub(crate) struct Table {
    entries: BoundedMap<u64, Unfinished>,
}

impl Default for Table {
    fn default() -> Self {
        Self {
            entries: BoundedMap::new(CAPACITY),
        }
    }
}

impl Table {
    pub(crate) fn take(&mut self, key: u64) -> Option<Unfinished> {
        self.entries.remove(&key)
    }

    pub(crate) fn put(&mut self, key: u64, u: Unfinished) {
        self.entries.insert(key, u);
    }
}

/// Identifies a message by where it goes and what it says.
pub(crate) fn key(m: &Outbound) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    m.address.hash(&mut h);
    m.text.hash(&mut h);
    m.reply_to.hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use matrix_sdk::ruma::TransactionId;
    use switchboard_core::ChatAddress;

    #[test]
    fn a_retry_finds_what_was_sent_and_only_once() {
        let m = Outbound::new(ChatAddress::new("matrix.main", "!r:hs"), "long text");
        let other = Outbound::new(ChatAddress::new("matrix.main", "!r:hs"), "other text");
        assert_ne!(key(&m), key(&other));
        let mut t = Table::default();
        let txn = TransactionId::new();
        let sent = vec![MessageRef {
            chat: "!r:hs".into(),
            id: "$1".into(),
        }];
        t.put(key(&m), Unfinished { sent, txn: txn.clone() });
        assert!(t.take(key(&other)).is_none());
        let u = t.take(key(&m)).expect("resumable");
        assert_eq!(u.sent.len(), 1);
        assert_eq!(u.txn, txn);
        assert!(t.take(key(&m)).is_none(), "taken once");
    }
}
