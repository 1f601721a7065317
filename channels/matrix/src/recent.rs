//! A bounded set of recent ids: the oldest are forgotten first.

use std::collections::{HashSet, VecDeque};

const CAPACITY: usize = 10_000;

#[derive(Default)]
pub(crate) struct Recent {
    set: HashSet<String>,
    order: VecDeque<String>,
}

impl Recent {
    pub(crate) fn insert(&mut self, id: String) {
        if self.set.insert(id.clone()) {
            self.order.push_back(id);
            if self.order.len() > CAPACITY
                && let Some(old) = self.order.pop_front()
            {
                self.set.remove(&old);
            }
        }
    }

    pub(crate) fn contains(&self, id: &str) -> bool {
        self.set.contains(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forgets_the_oldest_beyond_capacity() {
        let mut r = Recent::default();
        for i in 0..=CAPACITY {
            r.insert(i.to_string());
        }
        assert!(!r.contains("0"));
        assert!(r.contains("1"));
        assert!(r.contains(&CAPACITY.to_string()));
        assert_eq!(r.order.len(), CAPACITY);
    }
}
