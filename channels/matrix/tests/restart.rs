//! The adapter starts again after it was stopped: the lease keeper stops
//! a channel whose lease moved and starts it when the lease comes back
//! (it answered "already started" for ever, and the bot stayed off).

use async_trait::async_trait;
use std::sync::Arc;
use std::time::Duration;
use switchboard_channel_matrix::{Auth, MatrixChannel, Settings};
use switchboard_core::{Channel, Inbound, Intake, IntakeError};

struct Nothing;

#[async_trait]
impl Intake for Nothing {
    async fn cursor(&self, _: &str) -> Result<Option<String>, IntakeError> {
        Ok(None)
    }
    async fn take(&self, _: &str, _: Vec<Inbound>, _: Option<String>) -> Result<(), IntakeError> {
        Ok(())
    }
}

#[tokio::test]
async fn a_stopped_channel_starts_again() {
    let dir = tempfile::tempdir().unwrap();
    let channel = MatrixChannel::new(Settings {
        name: "matrix.main".into(),
        // Nothing listens there: the adapter keeps trying in the background.
        homeserver: "http://127.0.0.1:9".into(),
        user_id: "@bot:example.org".into(),
        auth: Auth::Password("secret".into()),
        store_dir: dir.path().join("store"),
        store_passphrase: None,
        auto_join: Vec::new(),
        invites_from: Vec::new(),
        sync_timeout: Duration::from_secs(1),
    })
    .unwrap();
    let intake: Arc<dyn Intake> = Arc::new(Nothing);
    channel.start(intake.clone()).await.unwrap();
    channel.stop().await;
    channel.start(intake).await.expect("started again");
    channel.stop().await;
}
