//! A message taken into the inbox (the durable table of messages people
//! sent), on its way to the router and, once answered, marked done.

use crate::commands::Command;
use crate::routing::Routed;
use switchboard_config::Config;
use switchboard_core::Inbound;
use switchboard_store::{InboxRow, Store};

/// A message in the inbox, on its way to the router.
#[derive(Debug, Clone)]
pub(crate) struct Taken {
    /// Its inbox key (also the turn tag of its transcript messages).
    pub key: String,
    pub m: Inbound,
    /// When the gateway took it (Unix ms).
    pub received_at: i64,
    /// Found pending at start: the process that took it stopped before
    /// answering.
    pub recovered: bool,
    /// Earlier messages of the same person that joined this one's turn
    /// (their inbox keys): answered with it, in the same transaction.
    pub merged: Vec<String>,
    /// The route that took it, decided when it was taken (none: no agent
    /// answers where it was written).
    pub route: Option<Routed>,
    /// The command it is, read once when it was taken (none: it goes to
    /// the agent).
    pub command: Option<Command>,
    /// How often its turn was put back because the database did not take
    /// writes (see `router::put_back`).
    pub held_up: u32,
    /// The life of this process it was taken or adopted in
    /// (`Store::life`; see `held_here`).
    pub life: u64,
}

impl Taken {
    /// A pending inbox row, as the router takes it after a restart: routed
    /// by the configuration in force now.
    pub(crate) fn recovered(row: InboxRow, config: &Config) -> Result<Self, String> {
        let m: Inbound = serde_json::from_str(&row.body).map_err(|e| format!("inbox row {}: {e}", row.key))?;
        Ok(Self {
            key: row.key,
            route: crate::routing::route_now(config, &m),
            command: crate::commands::of(&m),
            m,
            received_at: row.received_at,
            recovered: true,
            merged: Vec::new(),
            held_up: 0,
            life: row.life,
        })
    }

    /// The agent that answers it.
    pub(crate) fn agent(&self) -> Option<&str> {
        self.route.as_ref().map(|r| r.agent.as_str())
    }

    /// Whether it is still this process's, as far as it knows without a
    /// read: not once a heartbeat found that the others took the process
    /// for dead after it took the message (they adopted it).
    pub(crate) fn held_here(&self, store: &Store) -> bool {
        self.life == store.life()
    }

    /// Whether it may still be this instance's to answer, asked after a
    /// write of its turn failed: not when the database says another
    /// instance took it over (this one stalled past its lease, and the
    /// message was adopted and answered there); yes when the database
    /// cannot say within `OWNER_READ` (it is away: why the write failed).
    pub(crate) async fn may_be_ours(&self, store: &Store) -> bool {
        match tokio::time::timeout(OWNER_READ, store.inbox().still_mine(&self.key)).await {
            Ok(Ok(mine)) => mine,
            Ok(Err(_)) | Err(_) => true,
        }
    }
}

/// How long `may_be_ours` waits for the database: a person told that the
/// database is away is not kept waiting for the pool's own timeout.
const OWNER_READ: std::time::Duration = std::time::Duration::from_secs(1);
