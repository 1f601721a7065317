//! Notices to people not on a channel's allow list: at most one per
//! sender an hour, in direct chats only (in a group the bot stays silent:
//! a notice there would be noise for everyone, and on Discord a thread),
//! and sent once, never queued in the outbox — a flood of strangers must
//! not cost the people the bot serves. The memory is bounded: past
//! `MAX_REMEMBERED` senders in an hour, further strangers get no notice.

use std::collections::HashMap;
use std::time::{Duration, Instant};
use switchboard_core::UserId;

/// How often one stranger is told.
pub(super) const EVERY: Duration = Duration::from_secs(3600);

/// Strangers remembered at once.
const MAX_REMEMBERED: usize = 10_000;

#[derive(Default)]
pub(super) struct Strangers {
    told: HashMap<UserId, Instant>,
}

impl Strangers {
    /// Whether `who` is to be told now (and remember that they were).
    pub(super) fn tell(&mut self, who: &UserId, now: Instant) -> bool {
        if let Some(last) = self.told.get(who)
            && now.duration_since(*last) < EVERY
        {
            return false;
        }
        if self.told.len() >= MAX_REMEMBERED && !self.told.contains_key(who) {
            self.told.retain(|_, t| now.duration_since(*t) < EVERY);
            if self.told.len() >= MAX_REMEMBERED {
                return false;
            }
        }
        self.told.insert(who.clone(), now);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn once_an_hour_per_stranger_and_bounded() {
        let mut s = Strangers::default();
        let t0 = Instant::now();
        let eve = UserId("tg:66".into());
        assert!(s.tell(&eve, t0));
        assert!(!s.tell(&eve, t0 + Duration::from_secs(60)));
        assert!(s.tell(&UserId("tg:67".into()), t0), "per sender");
        assert!(s.tell(&eve, t0 + EVERY), "an hour later");
        for i in 0..MAX_REMEMBERED + 10 {
            s.tell(&UserId(format!("tg:{}", 1000 + i)), t0 + EVERY);
        }
        assert!(s.told.len() <= MAX_REMEMBERED);
        assert!(!s.tell(&UserId("tg:999999".into()), t0 + EVERY), "full: no notice");
    }
}
