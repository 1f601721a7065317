//! `max_actions_per_hour`: a sliding one-hour window of tool executions.

use parking_lot::Mutex;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Tool executions of the last hour.
#[derive(Debug)]
pub struct ActionTracker {
    limit: u32,
    window: Mutex<VecDeque<Instant>>,
}

impl ActionTracker {
    /// A budget of `limit` actions per hour.
    pub fn new(limit: u32) -> Self {
        Self {
            limit,
            window: Mutex::new(VecDeque::new()),
        }
    }

    /// The hourly limit.
    pub fn limit(&self) -> u32 {
        self.limit
    }

    /// Count one action; false when the hourly budget is spent.
    pub fn try_record(&self) -> bool {
        self.try_record_at(Instant::now(), None)
    }

    /// Count one action unless the window holds `cap` (or the limit) already.
    pub fn try_record_capped(&self, cap: Option<u32>) -> bool {
        self.try_record_at(Instant::now(), cap)
    }

    fn try_record_at(&self, now: Instant, cap: Option<u32>) -> bool {
        let mut w = self.window.lock();
        while w
            .front()
            .is_some_and(|t| now.duration_since(*t) >= Duration::from_secs(3600))
        {
            w.pop_front();
        }
        if w.len() as u32 >= cap.map_or(self.limit, |c| c.min(self.limit)) {
            return false;
        }
        w.push_back(now);
        true
    }

    /// Actions counted in the last hour.
    pub fn used(&self) -> u32 {
        self.window.lock().len() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_slides() {
        let t = ActionTracker::new(2);
        let start = Instant::now();
        assert!(t.try_record_at(start, None));
        assert!(t.try_record_at(start, None));
        assert!(!t.try_record_at(start + Duration::from_secs(10), None));
        assert!(t.try_record_at(start + Duration::from_secs(3601), None));
    }
}
