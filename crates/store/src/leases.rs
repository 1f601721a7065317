//! Channel leases: which instance runs each chat platform account, and the
//! generation that fences its cursor writes (see migration 0007). A lease
//! not renewed for the lease time is free; taking it bumps the generation.

use crate::stmt::Stmt;
use crate::{Store, StoreError};
use sqlx::FromRow;

/// One channel's lease.
#[derive(Debug, Clone, FromRow)]
pub struct LeaseRow {
    /// The channel instance (`telegram.main`).
    pub channel: String,
    /// The instance that holds it.
    pub owner: String,
    /// Bumped by every new owner.
    pub generation: i64,
    /// Its last renewal (Unix ms).
    pub renewed_at: i64,
}

impl LeaseRow {
    /// Whether its holder renewed it within `lease_ms` before `now`.
    pub fn is_held(&self, now: i64, lease_ms: i64) -> bool {
        now - self.renewed_at <= lease_ms
    }
}

impl<'s> Leases<'s> {
    /// Take `channel`'s lease when it is free (never held, released, or not
    /// renewed for `lease_ms`), or keep it when this instance holds it.
    /// Returns the generation this instance holds, if it does.
    pub async fn acquire(self, channel: &str, lease_ms: i64) -> Result<Option<i64>, StoreError> {
        let Some(me) = self.0.instance_id() else {
            return Ok(None);
        };
        let now = self.0.now_ms();
        // A holder's silence counts only while this instance reached the
        // database too (see `reach`): until it has for a whole lease, only
        // a released lease (renewed_at 0) is taken.
        let stale_before = if self.0.reachable_since() <= now - lease_ms {
            now - lease_ms
        } else {
            1
        };
        self.0
            .exec(
                Stmt::new(
                    "INSERT INTO channel_leases (channel, owner, generation, renewed_at) VALUES ($1, $2, 1, $3)
                 ON CONFLICT (channel) DO UPDATE SET owner = excluded.owner,
                     generation = channel_leases.generation + 1, renewed_at = excluded.renewed_at
                 WHERE channel_leases.owner <> excluded.owner AND channel_leases.renewed_at < $4",
                )
                .bind(channel)
                .bind(me)
                .bind(now)
                .bind(stale_before),
            )
            .await?;
        let row = self.get(channel).await?;
        Ok(row.filter(|r| r.owner == me).map(|r| r.generation))
    }

    /// Renew this instance's lease of `channel` at `generation`; false when
    /// it was lost (another instance took it), or when the others took this
    /// instance for dead (its row is gone: they may take the channel any
    /// moment, and what it would take meanwhile they adopt).
    pub async fn renew(self, channel: &str, generation: i64) -> Result<bool, StoreError> {
        let Some(me) = self.0.instance_id() else {
            return Ok(false);
        };
        let n = self
            .0
            .exec(
                Stmt::new(
                    "UPDATE channel_leases SET renewed_at = $1 WHERE channel = $2 AND owner = $3 AND generation = $4
                     AND EXISTS (SELECT 1 FROM instances WHERE id = $3)",
                )
                .bind(self.0.now_ms())
                .bind(channel)
                .bind(me)
                .bind(generation),
            )
            .await?;
        Ok(n == 1)
    }

    /// Give `channel` up at once (a clean stop): another instance may take
    /// it without waiting for the lease to run out.
    pub async fn release(self, channel: &str, generation: i64) -> Result<(), StoreError> {
        if let Some(me) = self.0.instance_id() {
            self.0.exec(
                Stmt::new(
                    "UPDATE channel_leases SET renewed_at = 0 WHERE channel = $1 AND owner = $2 AND generation = $3",
                )
                .bind(channel)
                .bind(me)
                .bind(generation),
            )
            .await?;
        }
        Ok(())
    }

    /// `channel`'s lease, if it was ever taken.
    pub async fn get(self, channel: &str) -> Result<Option<LeaseRow>, StoreError> {
        Ok(read!(self.0, |p| sqlx::query_as::<_, LeaseRow>(
            "SELECT channel, owner, generation, renewed_at FROM channel_leases WHERE channel = $1"
        )
        .bind(channel)
        .fetch_optional(p)
        .await)?)
    }

    /// Every lease, by channel.
    pub async fn all(self) -> Result<Vec<LeaseRow>, StoreError> {
        Ok(read!(self.0, |p| sqlx::query_as::<_, LeaseRow>(
            "SELECT channel, owner, generation, renewed_at FROM channel_leases ORDER BY channel"
        )
        .fetch_all(p)
        .await)?)
    }

    /// Claim cron job `job`'s slot `slot` (its scheduled second) for this
    /// instance; false when another instance fired it already.
    pub async fn claim_cron_slot(self, job: &str, slot: i64) -> Result<bool, StoreError> {
        let n = self
            .0
            .exec(
                Stmt::new(
                    "INSERT INTO cron_slots (job, slot, instance_id, fired_at) VALUES ($1, $2, $3, $4)
                     ON CONFLICT (job, slot) DO NOTHING",
                )
                .bind(job)
                .bind(slot)
                .bind(self.0.instance_id().unwrap_or(""))
                .bind(self.0.now_ms()),
            )
            .await?;
        Ok(n == 1)
    }
}

/// The cursor write of a channel whose lease is held at `generation`: it
/// changes nothing (and the transaction it is in fails) when the lease has
/// moved on — a paused old owner cannot move a cursor back — or when its
/// owner was taken for dead (the others reclaimed it, and take the channel
/// next: a take of its own in between would be run by both).
pub(crate) fn fenced_cursor_stmt(channel: &str, cursor: &str, owner: &str, generation: i64) -> Stmt {
    Stmt::new(
        "INSERT INTO channel_cursors (channel, cursor, updated_at)
         SELECT $1, $2, $3 WHERE EXISTS
             (SELECT 1 FROM channel_leases WHERE channel = $1 AND owner = $4 AND generation = $5
                 AND EXISTS (SELECT 1 FROM instances WHERE id = $4))
         ON CONFLICT (channel) DO UPDATE SET cursor = excluded.cursor, updated_at = excluded.updated_at",
    )
    .bind(channel)
    .bind(cursor)
    .bind(crate::now_ms())
    .bind(owner)
    .bind(generation)
    .required()
}

/// Channel leases and cron slots (`leases`).
#[derive(Clone, Copy)]
pub struct Leases<'s>(&'s Store);

impl Store {
    /// Channel leases and cron slots (`leases`).
    pub fn leases(&self) -> Leases<'_> {
        Leases(self)
    }
}
