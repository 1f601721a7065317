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
        .enqueue("run-1", "telegram.main", "11", None, "done")
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
        .enqueue("run-a", "discord.main", "c", None, "theirs")
        .await
        .unwrap();
    assert!(store.outbox().due_in(&ours, 10).await.unwrap().is_empty());
    assert_eq!(store.outbox().next_due_in(&ours).await.unwrap(), None);
    store
        .outbox()
        .enqueue("run-b", "telegram.main", "11", Some("7"), "ours")
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

on_both_backends!(delivered_marks_together, delivered_marks);

/// Delivered marks do not wait for their write: many queued at once are
/// written in a few statements, every one lands, and `close` writes those
/// still queued.
async fn delivered_marks(url: &str) {
    use switchboard_store::{NewInbound, OutboxStatus, QueuedReply, reply_key};
    let store = Store::open(url).await.unwrap();
    let n = 300;
    let rows: Vec<NewInbound> = (0..n)
        .map(|i| NewInbound {
            key: format!("k{i}"),
            channel: "telegram.main".into(),
            chat: format!("{i}"),
            platform_id: format!("{i}"),
            sender: format!("tg:{i}"),
            body: "{}".into(),
        })
        .collect();
    store.inbox().take("telegram.main", &rows, None, None).await.unwrap();
    for i in 0..n {
        let chat = format!("{i}");
        let reply = QueuedReply {
            channel: "telegram.main",
            chat: &chat,
            thread: None,
            reply_to: None,
            body: "answer",
        };
        assert!(store.inbox().finish(&format!("k{i}"), Some(&reply)).await.unwrap());
    }
    let status = |i: usize| {
        let store = store.clone();
        async move { store.outbox().of_run(&reply_key(&format!("k{i}"))).await.unwrap()[0].0 }
    };
    let before = store.writes();
    for i in 0..n {
        store.inbox().reply_delivered(&format!("k{i}"));
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while status(n - 1).await != OutboxStatus::Delivered {
        assert!(std::time::Instant::now() < deadline, "the marks were never written");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    for i in 0..n {
        assert_eq!(status(i).await, OutboxStatus::Delivered, "reply {i}");
    }
    let writes = store.writes() - before;
    assert!(writes <= 10, "{n} marks took {writes} writes");
    // Queued just before a clean stop: written by `close`.
    let reopened = Store::open(url).await.unwrap();
    let last = NewInbound {
        key: "k-last".into(),
        channel: "telegram.main".into(),
        chat: "x".into(),
        platform_id: "x".into(),
        sender: "tg:x".into(),
        body: "{}".into(),
    };
    reopened
        .inbox()
        .take("telegram.main", &[last], None, None)
        .await
        .unwrap();
    let reply = QueuedReply {
        channel: "telegram.main",
        chat: "x",
        thread: None,
        reply_to: None,
        body: "last",
    };
    assert!(reopened.inbox().finish("k-last", Some(&reply)).await.unwrap());
    let other = Store::open(url).await.unwrap();
    other.inbox().reply_delivered("k-last");
    other.close().await;
    assert_eq!(
        reopened.outbox().of_run(&reply_key("k-last")).await.unwrap()[0].0,
        OutboxStatus::Delivered
    );
}
