//! Notices to people not on a channel's allow list: at most one per
//! sender an hour, in direct chats only (in a group the bot stays silent:
//! a notice there would be noise for everyone, and on Discord a thread),
//! and sent once, never queued in the outbox — a flood of strangers must
//! not cost the people the bot serves. The memory is bounded: past
//! `MAX_REMEMBERED` senders in an hour, further strangers get no notice.
//! And all strangers together get at most `PER_MINUTE` notices a minute
//! (many new accounts at once share the bot's platform rate limit with
//! the people it serves); one not told then may be told later.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};
use switchboard_core::UserId;

/// How often one stranger is told.
pub(super) const EVERY: Duration = Duration::from_secs(3600);

/// Strangers remembered at once.
const MAX_REMEMBERED: usize = 10_000;

/// Notices to all strangers together, per minute.
const PER_MINUTE: usize = 20;

#[derive(Default)]
pub(super) struct Strangers {
    told: HashMap<UserId, Instant>,
    /// When the notices of the last minute were given.
    recent: VecDeque<Instant>,
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
        while self
            .recent
            .front()
            .is_some_and(|t| now.duration_since(*t) >= Duration::from_secs(60))
        {
            self.recent.pop_front();
        }
        if self.recent.len() >= PER_MINUTE {
            return false;
        }
        self.recent.push_back(now);
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
        // As many strangers as the per-minute budget lets through, for
        // ten hours: the memory stays bounded.
        let mut told = 0;
        for i in 0..12_000u64 {
            let at = t0 + EVERY + Duration::from_millis(60_000 + 3_100 * i);
            told += usize::from(s.tell(&UserId(format!("tg:{}", 1000 + i)), at));
        }
        assert_eq!(told, 12_000);
        assert!(s.told.len() <= MAX_REMEMBERED, "{}", s.told.len());
    }

    #[test]
    fn all_strangers_together_get_a_few_notices_a_minute() {
        let mut s = Strangers::default();
        let t0 = Instant::now();
        let told = (0..100)
            .filter(|i| s.tell(&UserId(format!("tg:{i}")), t0 + Duration::from_millis(*i)))
            .count();
        assert_eq!(told, PER_MINUTE);
        let late = UserId("tg:50".into());
        assert!(
            s.tell(&late, t0 + Duration::from_secs(61)),
            "one not told may be told later"
        );
    }
}
