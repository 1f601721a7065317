//! The inbox, the leases and outbox claims on SQLite and, when
//! `SWITCHBOARD_TEST_POSTGRES_URL` names a server (CI starts one), on
//! PostgreSQL.

mod support;

use switchboard_store::{NewInbound, QueuedReply, Store};

on_both_backends!(inbox_table, inbox);
on_both_backends!(lease_table, leases);
on_both_backends!(outbox_claims, claims);

/// The inbox: taken with the cursor, once per platform message id,
/// answered with its reply queued, adopted from a gone instance, pruned.
async fn inbox(url: &str) {
    let store = &Store::open(url).await.unwrap();
    let message = |key: &str, platform_id: &str| NewInbound {
        key: key.into(),
        channel: "telegram.main".into(),
        chat: "11".into(),
        platform_id: platform_id.into(),
        sender: "tg:11".into(),
        body: format!("{{\"text\": \"{key}\"}}"),
    };
    let fresh = store
        .inbox()
        .take(
            "telegram.main",
            &[message("k1", "5"), message("k2", "6")],
            Some("7"),
            None,
        )
        .await
        .unwrap()
        .fresh;
    assert_eq!(fresh, [true, true]);
    assert_eq!(
        store.cursors().get("telegram.main").await.unwrap().as_deref(),
        Some("7")
    );
    // The same platform message again (another key): not taken twice.
    let again = store
        .inbox()
        .take("telegram.main", &[message("k3", "5")], Some("8"), None)
        .await
        .unwrap()
        .fresh;
    assert_eq!(again, [false]);
    assert_eq!(
        store.cursors().get("telegram.main").await.unwrap().as_deref(),
        Some("8")
    );
    assert_eq!(store.inbox().counts().await.unwrap(), (2, 0));

    // Answered: done, and the reply waits in the outbox (leased to this
    // instance, so the outbox worker does not see it yet).
    let reply = QueuedReply {
        channel: "telegram.main",
        chat: "11",
        thread: None,
        reply_to: Some("5"),
        body: "the answer",
    };
    store.inbox().finish("k1", Some(&reply)).await.unwrap();
    assert_eq!(store.inbox().counts().await.unwrap(), (1, 1));
    assert!(store.outbox().due(10).await.unwrap().is_empty());
    store.inbox().reply_to_outbox("k1", "channel down").await.unwrap();
    let due = store.outbox().due(10).await.unwrap();
    assert_eq!(due.len(), 1);
    assert_eq!(
        (due[0].body.as_str(), due[0].reply_to.as_deref()),
        ("the answer", Some("5"))
    );
    // A second finish (a re-run) queues nothing more.
    store.inbox().finish("k1", Some(&reply)).await.unwrap();
    assert_eq!(store.outbox().due(10).await.unwrap().len(), 1);

    // k2 belongs to no registered instance: the next process adopts it.
    store.register_instance("host", 1, "run").await.unwrap();
    let adopted = store.inbox().adopt_orphans().await.unwrap();
    assert_eq!(adopted.iter().map(|r| r.key.as_str()).collect::<Vec<_>>(), ["k2"]);
    assert!(store.inbox().adopt_orphans().await.unwrap().is_empty(), "adopted once");

    // Pruning keeps what is younger than the retention.
    assert_eq!(store.inbox().prune(3_600_000).await.unwrap(), 0);
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    assert_eq!(store.inbox().prune(1).await.unwrap(), 1);
    assert_eq!(store.inbox().counts().await.unwrap(), (1, 0));
}

/// Two instances on one database: one holds a channel's lease; the other
/// takes it only once it runs out, with a new generation; the old owner's
/// cursor write under its old generation changes nothing (fencing); a cron
/// slot is claimed once.
async fn leases(url: &str) {
    let (a, b) = (Store::open(url).await.unwrap(), Store::open(url).await.unwrap());
    a.register_instance("host-a", 1, "run").await.unwrap();
    b.register_instance("host-b", 2, "run").await.unwrap();
    let ga = a
        .leases()
        .acquire("telegram.main", 60_000)
        .await
        .unwrap()
        .expect("free at first");
    assert_eq!(
        a.leases().acquire("telegram.main", 60_000).await.unwrap(),
        Some(ga),
        "kept by its owner"
    );
    assert_eq!(
        b.leases().acquire("telegram.main", 60_000).await.unwrap(),
        None,
        "held by a"
    );
    assert!(a.leases().renew("telegram.main", ga).await.unwrap());
    a.inbox()
        .take("telegram.main", &[], Some("10"), Some(ga))
        .await
        .unwrap();
    // Taken for dead (b reclaims it) before b takes the channel: a keeps
    // neither the lease nor a take of its own.
    let a_id = a.instance_id().unwrap().to_string();
    b.reclaim(std::slice::from_ref(&a_id)).await.unwrap();
    assert!(
        !a.leases().renew("telegram.main", ga).await.unwrap(),
        "renewed when taken for dead"
    );
    assert!(
        a.inbox()
            .take("telegram.main", &[late("taken for dead", "98")], Some("12"), Some(ga))
            .await
            .is_err(),
        "took messages when taken for dead"
    );
    // (On PostgreSQL: SQLite serves one process, which nobody reclaims.)
    if url.starts_with("postgres") {
        assert!(
            a.inbox()
                .take("telegram.main", &[late("unfenced", "97")], None, None)
                .await
                .is_err(),
            "took messages without a lease when taken for dead (a webhook's, a local chat's)"
        );
    }
    // Its next heartbeat finds it: a new life, for what it takes from now on.
    assert_eq!(a.life(), 0);
    assert!(!a.heartbeat(std::time::Duration::from_secs(1)).await.unwrap());
    assert_eq!(a.life(), 1);
    assert_eq!(b.inbox().counts().await.unwrap().0, 0);
    assert_eq!(b.cursors().get("telegram.main").await.unwrap().as_deref(), Some("10"));
    // The lease runs out (a lease time of 0 ms, and a moment passes): b
    // takes it.
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let gb = b
        .leases()
        .acquire("telegram.main", 0)
        .await
        .unwrap()
        .expect("expired, so free");
    assert!(gb > ga);
    b.inbox()
        .take("telegram.main", &[], Some("20"), Some(gb))
        .await
        .unwrap();
    // a wakes up: its renewal and its cursor write are refused.
    assert!(!a.leases().renew("telegram.main", ga).await.unwrap());
    assert!(
        a.inbox()
            .take("telegram.main", &[late("late", "99")], Some("15"), Some(ga))
            .await
            .is_err()
    );
    assert_eq!(
        b.cursors().get("telegram.main").await.unwrap().as_deref(),
        Some("20"),
        "never moved back"
    );
    assert_eq!(
        b.inbox().counts().await.unwrap().0,
        0,
        "nothing of the refused take was written"
    );
    // A clean stop frees it at once.
    b.leases().release("telegram.main", gb).await.unwrap();
    assert!(a.leases().acquire("telegram.main", 60_000).await.unwrap().is_some());
    assert!(a.leases().claim_cron_slot("nightly", 1_000).await.unwrap());
    assert!(
        !b.leases().claim_cron_slot("nightly", 1_000).await.unwrap(),
        "fired once"
    );
    assert!(b.leases().claim_cron_slot("nightly", 2_000).await.unwrap());
    assert_eq!(a.leases().all().await.unwrap().len(), 1);
}

/// A message of tg:1 with key `key` and platform id `platform_id`.
fn late(key: &str, platform_id: &str) -> NewInbound {
    NewInbound {
        key: key.into(),
        channel: "telegram.main".into(),
        chat: "1".into(),
        platform_id: platform_id.into(),
        sender: "tg:1".into(),
        body: "{}".into(),
    }
}

/// An outbox row is taken for one attempt by one instance at a time, not
/// again once delivered, and not by an instance the others took for dead;
/// the reclaim frees what that instance had taken.
async fn claims(url: &str) {
    let (a, b) = (Store::open(url).await.unwrap(), Store::open(url).await.unwrap());
    a.register_instance("host-a", 1, "run").await.unwrap();
    b.register_instance("host-b", 2, "run").await.unwrap();
    for key in ["run-1", "run-2"] {
        a.outbox()
            .enqueue(key, "telegram.main", "1", None, "done")
            .await
            .unwrap();
    }
    let due = a.outbox().due(10).await.unwrap();
    let (one, two) = (due[0].id, due[1].id);
    assert!(a.outbox().claim(one, 60_000).await.unwrap());
    assert!(!b.outbox().claim(one, 60_000).await.unwrap(), "taken by a");
    assert_eq!(
        b.outbox().due(10).await.unwrap().len(),
        1,
        "run-1 is not due while taken"
    );
    // a is taken for dead: it takes nothing more, and what it held is free.
    let a_id = a.instance_id().unwrap().to_string();
    b.reclaim(std::slice::from_ref(&a_id)).await.unwrap();
    assert!(!a.outbox().claim(two, 60_000).await.unwrap(), "taken for dead");
    assert!(b.outbox().claim(one, 60_000).await.unwrap(), "freed by the reclaim");
    b.outbox().mark_delivered(one).await.unwrap();
    assert!(!b.outbox().claim(one, 0).await.unwrap(), "delivered");
    assert!(b.outbox().claim(two, 0).await.unwrap());
}
