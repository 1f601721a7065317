//! A sliding one-minute window of each person's messages
//! (`[limits].messages_per_minute`).

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};
use switchboard_core::UserId;

const WINDOW: Duration = Duration::from_secs(60);

#[derive(Default)]
pub(super) struct Window {
    recent: HashMap<UserId, Person>,
    /// When quiet people were last forgotten (at most once a window, not
    /// at every message).
    swept: Option<Instant>,
}

#[derive(Default)]
struct Person {
    times: VecDeque<Instant>,
    /// Told about the limit in this burst already (tell once, not per message).
    warned: bool,
}

#[derive(Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    Allowed,
    /// Over the limit; `tell` is true for the first refused message of a burst.
    Limited {
        tell: bool,
    },
}

impl Window {
    /// Count a message from `who` at `now` against `limit` a minute (0 = none).
    pub(super) fn check(&mut self, who: &UserId, now: Instant, limit: u32) -> Verdict {
        if limit == 0 {
            return Verdict::Allowed;
        }
        // People who have been quiet for a minute are forgotten.
        if self.swept.is_none_or(|t| now.duration_since(t) >= WINDOW) {
            self.recent
                .retain(|_, p| p.times.back().is_some_and(|t| now.duration_since(*t) < WINDOW));
            self.swept = Some(now);
        }
        let person = self.recent.entry(who.clone()).or_default();
        while person.times.front().is_some_and(|t| now.duration_since(*t) >= WINDOW) {
            person.times.pop_front();
        }
        if person.times.len() >= limit as usize {
            let tell = !person.warned;
            person.warned = true;
            return Verdict::Limited { tell };
        }
        person.warned = false;
        person.times.push_back(now);
        Verdict::Allowed
    }

    /// Take back the newest count of `who`: its message was not stored
    /// (the platform offers it again, and it is counted then).
    pub(super) fn refund(&mut self, who: &UserId) {
        if let Some(person) = self.recent.get_mut(who) {
            person.times.pop_back();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_offered_again_after_a_failed_store_counts_once() {
        let mut w = Window::default();
        let ann = UserId("tg:1".into());
        let t0 = Instant::now();
        // The same two messages offered ten times while the inbox cannot
        // store them: each offer is taken back.
        for _ in 0..10 {
            for _ in 0..2 {
                assert_eq!(w.check(&ann, t0, 3), Verdict::Allowed);
            }
            w.refund(&ann);
            w.refund(&ann);
        }
        for _ in 0..3 {
            assert_eq!(w.check(&ann, t0, 3), Verdict::Allowed);
        }
    }

    #[test]
    fn a_burst_is_limited_and_told_once() {
        let mut w = Window::default();
        let ann = UserId("tg:1".into());
        let bob = UserId("tg:2".into());
        let t0 = Instant::now();
        for _ in 0..3 {
            assert_eq!(w.check(&ann, t0, 3), Verdict::Allowed);
        }
        assert_eq!(w.check(&ann, t0, 3), Verdict::Limited { tell: true });
        assert_eq!(w.check(&ann, t0, 3), Verdict::Limited { tell: false });
        assert_eq!(w.check(&bob, t0, 3), Verdict::Allowed, "limits are per person");
        assert_eq!(w.check(&ann, t0 + WINDOW, 3), Verdict::Allowed, "a minute later");
        assert_eq!(w.check(&ann, t0, 0), Verdict::Allowed, "0 means no limit");
    }
}
