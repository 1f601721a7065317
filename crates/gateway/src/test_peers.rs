//! Shared setup of the gateway's unit tests: a control plane in a temporary
//! folder and one local channel (`local.team`) in a channel set.

use crate::channels::ChannelSet;
use std::sync::Arc;
use switchboard_channel_local::{LocalChannel, LocalHub};
use switchboard_core::Channel;
use switchboard_store::Store;

pub(crate) struct TeamChannel {
    /// Keeps the database folder while the test runs.
    pub _dir: tempfile::TempDir,
    pub store: Store,
    pub team: Arc<LocalChannel>,
    pub channels: ChannelSet,
}

pub(crate) async fn team_channel() -> TeamChannel {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&format!("sqlite://{}/cp.db", dir.path().display()))
        .await
        .unwrap();
    let hub = LocalHub::new(&["team".to_string()]);
    let team = hub.channel("team").unwrap().clone();
    let mut channels = ChannelSet::default();
    channels.insert(team.clone() as Arc<dyn Channel>);
    TeamChannel {
        _dir: dir,
        store,
        team,
        channels,
    }
}
