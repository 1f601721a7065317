//! `[cluster]`: several gateways on one PostgreSQL control plane.

use serde::{Deserialize, Serialize};

/// `[cluster]`: how instances share channels.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(default)]
pub struct ClusterConfig {
    /// An instance whose heartbeat (and channel leases) are older than this
    /// is dead: another instance takes its channels. Heartbeats and lease
    /// renewals come every third of it.
    pub lease_secs: u64,
}

impl Default for ClusterConfig {
    fn default() -> Self {
        Self { lease_secs: 15 }
    }
}
