//! What the gateway knows about each channel's connection, for the health
//! page: adapters report when they lose or regain their platform (through
//! the intake), and every send reports how it went.

use parking_lot::Mutex;
use std::collections::BTreeMap;
use switchboard_store::now_ms;

/// One channel's last known state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ChannelState {
    /// Whether the last report was a success.
    pub(crate) up: bool,
    /// Since when it has been in this state (Unix ms).
    pub(crate) since: i64,
    /// The last error reported, and when.
    pub(crate) last_error: Option<(i64, String)>,
    /// Failures in a row since the last success.
    pub(crate) failures: u32,
}

impl ChannelState {
    /// `connected`, `reconnecting` (a few failures) or `down`.
    pub(crate) fn label(&self) -> &'static str {
        match (self.up, self.failures) {
            (true, _) => "connected",
            (false, 0..=2) => "reconnecting",
            _ => "down",
        }
    }
}

/// See the module doc.
#[derive(Default)]
pub(crate) struct HealthBoard {
    channels: Mutex<BTreeMap<String, ChannelState>>,
}

impl HealthBoard {
    /// `channel`'s record, made on its first report (every send and poll
    /// reports: the name is copied only once).
    fn with<T>(&self, channel: &str, f: impl FnOnce(&mut ChannelState) -> T) -> T {
        let mut map = self.channels.lock();
        if let Some(s) = map.get_mut(channel) {
            return f(s);
        }
        f(map.entry(channel.to_string()).or_default())
    }

    /// `channel` reached its platform.
    pub(crate) fn ok(&self, channel: &str) {
        self.with(channel, |s| {
            if !s.up || s.since == 0 {
                s.up = true;
                s.since = now_ms();
            }
            s.failures = 0;
        });
    }

    /// `channel` failed to reach its platform.
    pub(crate) fn failed(&self, channel: &str, error: &str) {
        let now = now_ms();
        self.with(channel, |s| {
            if s.up || s.since == 0 {
                s.up = false;
                s.since = now;
            }
            s.failures = s.failures.saturating_add(1);
            s.last_error = Some((now, error.chars().take(300).collect()));
        });
    }

    /// The state of `channel`, if anything was reported.
    pub(crate) fn state(&self, channel: &str) -> Option<ChannelState> {
        self.channels.lock().get(channel).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::HealthBoard;

    #[test]
    fn failures_turn_into_reconnecting_then_down_and_a_success_clears_them() {
        let board = HealthBoard::default();
        assert!(board.state("telegram.main").is_none());
        board.ok("telegram.main");
        assert_eq!(board.state("telegram.main").unwrap().label(), "connected");
        board.failed("telegram.main", "timed out");
        let s = board.state("telegram.main").unwrap();
        assert_eq!(s.label(), "reconnecting");
        assert_eq!(s.last_error.as_ref().unwrap().1, "timed out");
        board.failed("telegram.main", "timed out");
        board.failed("telegram.main", "timed out");
        assert_eq!(board.state("telegram.main").unwrap().label(), "down");
        board.ok("telegram.main");
        let s = board.state("telegram.main").unwrap();
        assert_eq!((s.label(), s.failures), ("connected", 0));
        assert!(s.last_error.is_some(), "the last error stays visible");
    }
}
