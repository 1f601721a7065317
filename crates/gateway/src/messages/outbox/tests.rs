//! The outbox worker against a local channel that goes down and comes back.

use super::*;
use switchboard_store::OutboxStatus;

#[tokio::test]
async fn an_announcement_waits_out_an_outage_and_arrives_once() {
    let peers = crate::test_peers::team_channel().await;
    let (store, team, channels) = (&peers.store, &peers.team, peers.channels.clone());
    team.set_down(true);
    assert!(
        store
            .outbox()
            .enqueue("run-1", "local.team", "general", Some("t1"), "Status: success")
            .await
            .unwrap()
    );
    assert!(
        !store
            .outbox()
            .enqueue("run-1", "local.team", "general", Some("t1"), "again")
            .await
            .unwrap()
    );
    let worker = spawn(store.clone(), channels, crate::cluster::Fences::default());
    tokio::time::sleep(Duration::from_millis(700)).await;
    let (status, attempts) = store.outbox().of_run("run-1").await.unwrap()[0];
    assert_eq!(status, OutboxStatus::Pending);
    assert!(attempts >= 1, "delivery was tried");
    assert!(team.events_after(0).is_empty());
    team.set_down(false);
    let mut delivered = false;
    for _ in 0..60 {
        if store.outbox().of_run("run-1").await.unwrap()[0].0 == OutboxStatus::Delivered {
            delivered = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(delivered);
    tokio::time::sleep(Duration::from_millis(500)).await;
    worker.abort();
    let events = team.events_after(0);
    assert_eq!(events.len(), 1, "delivered exactly once");
    assert_eq!(
        (events[0].chat.as_str(), events[0].thread.as_deref()),
        ("general", Some("t1"))
    );
    assert_eq!(events[0].text, "Status: success");
}

/// A channel that refuses every message for good (the chat is gone).
struct Refusing;

#[async_trait::async_trait]
impl switchboard_core::Channel for Refusing {
    fn name(&self) -> &str {
        "local.gone"
    }
    async fn start(&self, _: std::sync::Arc<dyn switchboard_core::Intake>) -> Result<(), ChannelError> {
        Ok(())
    }
    async fn send(&self, _: &Outbound) -> Result<Vec<switchboard_core::MessageRef>, ChannelError> {
        Err(ChannelError::Permanent("chat not found".into()))
    }
    async fn send_approval_prompt(
        &self,
        _: &ChatAddress,
        _: &switchboard_core::ApprovalPrompt,
    ) -> Result<switchboard_core::MessageRef, ChannelError> {
        Err(ChannelError::Permanent("chat not found".into()))
    }
    async fn update_approval_prompt(&self, _: &switchboard_core::PromptEdit<'_>) -> Result<(), ChannelError> {
        Err(ChannelError::Permanent("chat not found".into()))
    }
}

#[tokio::test]
async fn a_row_refused_for_good_is_given_up_after_a_few_tries() {
    let peers = crate::test_peers::team_channel().await;
    let store = &peers.store;
    let mut channels = peers.channels.clone();
    channels.insert(std::sync::Arc::new(Refusing));
    store
        .outbox()
        .enqueue("run-gone", "local.gone", "nowhere", None, "Status: success")
        .await
        .unwrap();
    let worker = spawn(store.clone(), channels, crate::cluster::Fences::default());
    let mut last = (OutboxStatus::Pending, 0);
    for _ in 0..200 {
        last = store.outbox().of_run("run-gone").await.unwrap()[0];
        if last.0 == OutboxStatus::Failed {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    worker.abort();
    assert_eq!(
        last,
        (OutboxStatus::Failed, GIVE_UP_AFTER),
        "given up after {GIVE_UP_AFTER} refusals"
    );
    assert_eq!(store.outbox().pending().await.unwrap(), 0, "nothing left queued");
}

/// A row read in a batch and delivered elsewhere before its turn (the
/// channel's next owner sent it while this process was paused) is not sent
/// again; one still due is sent once.
#[tokio::test]
async fn a_row_delivered_elsewhere_after_it_was_read_is_not_sent_again() {
    let peers = crate::test_peers::team_channel().await;
    let (store, team) = (&peers.store, &peers.team);
    for key in ["run-a", "run-b"] {
        store
            .outbox()
            .enqueue(key, "local.team", "general", None, key)
            .await
            .unwrap();
    }
    let batch = store.outbox().due(10).await.unwrap();
    assert_eq!(batch.len(), 2);
    // Sent by another instance meanwhile.
    store.outbox().mark_delivered(batch[0].id).await.unwrap();
    for row in batch {
        deliver(store, &peers.channels, row).await;
    }
    let sent: Vec<String> = team.events_after(0).into_iter().map(|e| e.text).collect();
    assert_eq!(sent, ["run-b"], "only the row still due is sent");
    assert_eq!(
        store.outbox().of_run("run-b").await.unwrap()[0].0,
        OutboxStatus::Delivered
    );
}
