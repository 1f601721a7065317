//! A map that holds at most a set number of entries: past that, the entry
//! inserted longest ago is forgotten (one at a time, never all at once), so
//! a flood of new keys costs bounded memory and evicts only the oldest.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;

/// At most `capacity` entries; the oldest insertion goes first.
#[derive(Debug)]
pub struct BoundedMap<K, V> {
    capacity: usize,
    /// Each value with the number of the insertion that made its entry.
    entries: HashMap<K, (V, u64)>,
    /// Insertions in order; a place whose number no longer matches its
    /// key's entry (removed, or removed and inserted again) is stale and
    /// skipped.
    order: VecDeque<(K, u64)>,
    next: u64,
}

impl<K: Eq + Hash + Clone, V> BoundedMap<K, V> {
    /// A map of at most `capacity` (at least 1) entries.
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            entries: HashMap::new(),
            order: VecDeque::new(),
            next: 0,
        }
    }

    /// Insert or replace `key` (a replaced key keeps its place); forgets
    /// the oldest entries past capacity.
    pub fn insert(&mut self, key: K, value: V) {
        if let Some(entry) = self.entries.get_mut(&key) {
            entry.0 = value;
            return;
        }
        let n = self.next;
        self.next += 1;
        self.entries.insert(key.clone(), (value, n));
        self.order.push_back((key, n));
        while self.entries.len() > self.capacity {
            let Some((old, n)) = self.order.pop_front() else { break };
            if self.entries.get(&old).is_some_and(|e| e.1 == n) {
                self.entries.remove(&old);
            }
        }
        // Stale places outnumbering live ones are dropped in one pass.
        if self.order.len() > 2 * self.capacity {
            let entries = &self.entries;
            self.order.retain(|(k, n)| entries.get(k).is_some_and(|e| e.1 == *n));
        }
    }

    /// The value of `key`.
    pub fn get(&self, key: &K) -> Option<&V> {
        self.entries.get(key).map(|e| &e.0)
    }

    /// Whether `key` is held.
    pub fn contains_key(&self, key: &K) -> bool {
        self.entries.contains_key(key)
    }

    /// Forget `key`, returning its value.
    pub fn remove(&mut self, key: &K) -> Option<V> {
        self.entries.remove(key).map(|e| e.0)
    }

    /// Every entry, oldest insertion first; the map is left empty.
    pub fn drain(&mut self) -> Vec<(K, V)> {
        let mut out = Vec::with_capacity(self.entries.len());
        for (k, n) in self.order.drain(..) {
            if self.entries.get(&k).is_some_and(|e| e.1 == n)
                && let Some((v, _)) = self.entries.remove(&k)
            {
                out.push((k, v));
            }
        }
        self.entries.clear();
        out
    }

    /// How many entries are held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_goes_first_and_one_at_a_time() {
        let mut m = BoundedMap::new(3);
        for k in 1..=3 {
            m.insert(k, k * 10);
        }
        m.insert(2, 21);
        m.insert(4, 40);
        assert_eq!(m.len(), 3);
        assert!(!m.contains_key(&1), "the oldest insertion is forgotten");
        assert_eq!(m.get(&2), Some(&21));
        assert_eq!(m.get(&4), Some(&40));
        m.insert(5, 50);
        assert!(!m.contains_key(&2));
        assert_eq!(m.len(), 3);
        assert_eq!(m.drain(), vec![(3, 30), (4, 40), (5, 50)]);
        assert!(m.is_empty());
    }

    #[test]
    fn removed_keys_do_not_pile_up() {
        let mut m = BoundedMap::new(2);
        for k in 0..1000 {
            m.insert(k, ());
            m.remove(&k);
        }
        assert!(m.is_empty());
        assert!(m.order.len() <= 4, "{}", m.order.len());
        m.insert(1, ());
        m.insert(2, ());
        m.insert(3, ());
        assert_eq!(m.len(), 2);
        assert!(m.contains_key(&3) && m.contains_key(&2));
    }

    /// A key taken out and put back (a retry table does this) is one entry
    /// with one place: it is not evicted early by its old place, and the
    /// places do not pile up.
    #[test]
    fn a_key_removed_and_inserted_again_has_one_place() {
        let mut m = BoundedMap::new(2);
        m.insert("a", 1);
        m.insert("b", 2);
        for i in 0..1000 {
            let v = m.remove(&"a").unwrap();
            m.insert("a", v + i);
        }
        assert!(m.order.len() <= 4, "{}", m.order.len());
        m.insert("c", 3);
        assert!(!m.contains_key(&"b"), "b is now the oldest");
        assert!(m.contains_key(&"a") && m.contains_key(&"c"));
    }
}
