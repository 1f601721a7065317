//! Whether this process has been reaching the database, and since when
//! (on the database's clock). Another instance is judged dead by the time
//! it has been silent while this one could write (see `instances` and
//! `leases`): a database outage silences every instance at once, so the
//! time it lasted must never count against anyone, or a live gateway
//! would be reclaimed the moment the database comes back.

use std::sync::atomic::{AtomicI64, Ordering};

/// After a break, how long a peer may take to reach the database again
/// before its silence counts: its own query in flight may wait out the
/// pool's 5 s for a connection, then its next beat (a third of the lease)
/// finds the database, on another server maybe (see `pg_hosts`). Without
/// it, the first instance back would take the others, still reconnecting,
/// for dead.
pub(crate) const REJOIN_MS: i64 = 10_000;

/// The last heartbeat that reached the database, and the start of the
/// unbroken run of heartbeats it ends.
#[derive(Debug, Default)]
pub(crate) struct Reach {
    last_ok: AtomicI64,
    since: AtomicI64,
}

impl Reach {
    /// Registered at `now`: reaching the database from now on.
    pub(crate) fn start(&self, now: i64) {
        self.last_ok.store(now, Ordering::Relaxed);
        self.since.store(now, Ordering::Relaxed);
    }

    /// A heartbeat failed: the run is broken.
    pub(crate) fn lost(&self) {
        self.last_ok.store(i64::MIN, Ordering::Relaxed);
    }

    /// Whether the last heartbeat failed.
    pub(crate) fn broken(&self) -> bool {
        self.last_ok.load(Ordering::Relaxed) == i64::MIN
    }

    /// A heartbeat reached the database at `now`; more than `gap_ms` since
    /// the one before (the database was away, or this process paused)
    /// starts a new run, counted from `REJOIN_MS` later.
    pub(crate) fn reached(&self, now: i64, gap_ms: i64) {
        let last = self.last_ok.swap(now, Ordering::Relaxed);
        if last == i64::MIN || now.saturating_sub(last) > gap_ms {
            self.since.store(now + REJOIN_MS, Ordering::Relaxed);
        }
    }

    /// Since when this process has reached the database without a break
    /// (0 before it registered: no run to judge by, nothing discounted;
    /// `i64::MAX` while the run is broken: nobody's silence counts until
    /// a heartbeat reaches the database again).
    pub(crate) fn since(&self) -> i64 {
        if self.broken() {
            return i64::MAX;
        }
        self.since.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gap_or_a_failure_starts_a_new_run() {
        let r = Reach::default();
        r.start(1_000);
        r.reached(6_000, 10_000);
        assert_eq!(r.since(), 1_000, "heartbeats on time keep the run");
        r.reached(30_000, 10_000);
        assert_eq!(
            r.since(),
            30_000 + REJOIN_MS,
            "24 s without one: the database was away; the others get time to come back"
        );
        r.lost();
        assert_eq!(r.since(), i64::MAX, "while broken, nobody's silence counts");
        r.reached(31_000, 10_000);
        assert_eq!(r.since(), 31_000 + REJOIN_MS, "a failed heartbeat breaks the run");
    }
}
