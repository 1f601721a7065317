//! The control plane's clock. Times that another gateway compares (heartbeats,
//! lease renewals, takes, cancellations, deadlines) are written on one clock
//! for the whole cluster: the database's. Each process keeps the offset
//! between its own clock and the database's, measured at open and again at
//! every heartbeat, so a host whose clock is off by minutes neither takes
//! its peers for dead nor looks dead to them. On SQLite (one host) the
//! offset is zero.

use crate::{Pools, Store, StoreError};
use std::sync::atomic::Ordering;

/// An offset larger than this is worth a warning (the host's clock is off).
const WORTH_SAYING_MS: i64 = 1_000;

/// A measurement whose round trip took longer than this is not trusted
/// (the offset it gives could be off by half of it).
const SLOWEST_SAMPLE_MS: i64 = 2_000;

impl Store {
    /// Now on the control plane's clock (Unix milliseconds).
    pub fn now_ms(&self) -> i64 {
        crate::now_ms() + self.clock_offset.load(Ordering::Relaxed)
    }

    /// Measure the offset between this host's clock and the database's again
    /// (PostgreSQL; nothing to do on SQLite). Returns whether the offset in
    /// use was measured now (a sample with a slow round trip is not used).
    pub async fn sync_clock(&self) -> Result<bool, StoreError> {
        let Pools::Postgres(p) = &self.pools else {
            return Ok(true);
        };
        let before = crate::now_ms();
        let (db,): (i64,) = sqlx::query_as("SELECT (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT")
            .fetch_one(p)
            .await?;
        let after = crate::now_ms();
        if after - before > SLOWEST_SAMPLE_MS {
            return Ok(false);
        }
        let offset = db - (before + after) / 2;
        let previous = self.clock_offset.swap(offset, Ordering::Relaxed);
        if offset.abs() > WORTH_SAYING_MS && (offset - previous).abs() > WORTH_SAYING_MS {
            tracing::warn!(
                offset_ms = offset,
                "this host's clock differs from the database's; cluster times (heartbeats, leases) use the database's clock"
            );
        }
        Ok(true)
    }
}
