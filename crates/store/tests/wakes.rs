//! Wake-ups between two processes sharing a database, played by two store
//! handles opened on one database: a write through one wakes the other's
//! watchers (PostgreSQL `NOTIFY`; SQLite's change counter while a peer is
//! known), and the outbox is read only for the channels a worker runs.

mod support;

use std::time::Duration;
use switchboard_store::Store;

on_both_backends!(signals_cross_processes, signals);
on_both_backends!(outbox_by_channel, outbox_channels);

/// A signal (and a queued outbox row) written through `b` wakes `a`.
async fn signals(url: &str) {
    let a = Store::open(url).await.unwrap();
    let b = Store::open(url).await.unwrap();
    let listener = a.spawn_listener();
    a.note_peers(true);
    // Let the listener settle (LISTEN issued; SQLite's first counter read).
    tokio::time::sleep(Duration::from_millis(1500)).await;

    let woken = a.signalled();
    b.mail().set_flag("paused", "1").await.unwrap();
    b.signal().await;
    tokio::time::timeout(Duration::from_secs(4), woken)
        .await
        .expect("a write and signal from the other process wakes this one's watchers");

    let queued = a.outbox_queued();
    b.outbox()
        .enqueue_announcement("run-1", "telegram.main", "11", None, "done")
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(4), queued)
        .await
        .expect("a row queued by the other process wakes this one's outbox worker");
    listener.abort();
}

/// Rows of channels a worker does not run are neither read nor waited on.
async fn outbox_channels(url: &str) {
    let store = Store::open(url).await.unwrap();
    let ours = vec!["telegram.main".to_string()];
    assert!(store.outbox().due_in(&ours, 10).await.unwrap().is_empty());
    assert_eq!(store.outbox().next_due_in(&ours).await.unwrap(), None);
    store
        .outbox()
        .enqueue_announcement("run-a", "discord.main", "c", None, "theirs")
        .await
        .unwrap();
    assert!(store.outbox().due_in(&ours, 10).await.unwrap().is_empty());
    assert_eq!(store.outbox().next_due_in(&ours).await.unwrap(), None);
    store
        .outbox()
        .enqueue_announcement("run-b", "telegram.main", "11", Some("7"), "ours")
        .await
        .unwrap();
    let due = store.outbox().due_in(&ours, 10).await.unwrap();
    assert_eq!(due.iter().map(|r| r.body.as_str()).collect::<Vec<_>>(), ["ours"]);
    assert!(store.outbox().next_due_in(&ours).await.unwrap().is_some());
    // Retried later: due no more, and the worker knows when to look again.
    store.outbox().retry(due[0].id, 30_000, "down").await.unwrap();
    assert!(store.outbox().due_in(&ours, 10).await.unwrap().is_empty());
    let next = store.outbox().next_due_in(&ours).await.unwrap().unwrap();
    let wait = next - store.now_ms();
    assert!((25_000..=31_000).contains(&wait), "next due in {wait} ms");
    let both = vec!["discord.main".to_string(), "telegram.main".to_string()];
    assert_eq!(store.outbox().due_in(&both, 10).await.unwrap().len(), 1);
}
