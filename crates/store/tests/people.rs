//! Pairings and two-person allows behave the same on SQLite and PostgreSQL.

use switchboard_store::{Allow, ApprovalStatus, Counted, NewApproval, NewPairing, Opened, PairingStatus, Store};

mod support;

on_both_backends!(pairings, pairings_on);
on_both_backends!(two_person, two_person_on);

fn request<'a>(id: &'a str, user: &'a str, approvers: &'a [String]) -> NewPairing<'a> {
    NewPairing {
        id,
        channel: "telegram.main",
        agent: "main",
        user_id: user,
        display_name: "Stranger",
        chat: "55",
        code: "ABCD2345",
        approvers,
        valid_ms: 3_600_000,
        max_pending: 3,
    }
}

async fn pairings_on(url: &str) {
    let store = Store::open(url).await.unwrap();
    let ops = ["tg:7".to_string()];
    let p = store.pairings();
    assert_eq!(p.open(&request("pair-1", "tg:1", &ops)).await.unwrap(), Opened::New);
    // One waiting request per person.
    assert_eq!(p.open(&request("pair-1b", "tg:1", &ops)).await.unwrap(), Opened::Full);
    assert_eq!(p.open(&request("pair-2", "tg:2", &ops)).await.unwrap(), Opened::New);
    assert_eq!(p.open(&request("pair-3", "tg:3", &ops)).await.unwrap(), Opened::New);
    // At most three wait on one channel.
    assert_eq!(p.open(&request("pair-4", "tg:4", &ops)).await.unwrap(), Opened::Full);
    assert_eq!(p.waiting().await.unwrap().len(), 3);
    assert!(!p.paired("telegram.main", "tg:1", "main").await.unwrap());
    assert!(
        p.decide("pair-1", PairingStatus::Paired, "tg:7", "console")
            .await
            .unwrap()
    );
    // Decided once: a second decision changes nothing.
    assert!(
        !p.decide("pair-1", PairingStatus::Denied, "tg:7", "console")
            .await
            .unwrap()
    );
    assert!(p.paired("telegram.main", "tg:1", "main").await.unwrap());
    assert!(!p.paired("discord.main", "tg:1", "main").await.unwrap());
    assert!(
        !p.paired("telegram.main", "tg:1", "ops").await.unwrap(),
        "paired with one agent only"
    );
    assert_eq!(p.paired_now(10).await.unwrap().len(), 1);
    assert!(
        p.decide("pair-2", PairingStatus::Denied, "tg:7", "console")
            .await
            .unwrap()
    );
    // A place freed: the fourth stranger may ask now.
    assert_eq!(p.open(&request("pair-4", "tg:4", &ops)).await.unwrap(), Opened::New);
    let row = p.latest("telegram.main", "tg:1").await.unwrap().unwrap();
    assert_eq!(
        (row.status, row.decided_by.as_deref(), row.approvers),
        (PairingStatus::Paired, Some("tg:7"), ops.to_vec())
    );
    assert_eq!(p.revoke("tg:1", "tg:7", "console").await.unwrap(), 1);
    assert!(!p.paired("telegram.main", "tg:1", "main").await.unwrap());
    assert_eq!(p.get("pair-1").await.unwrap().unwrap().status, PairingStatus::Revoked);
    store.close().await;
}

async fn two_person_on(url: &str) {
    let store = Store::open(url).await.unwrap();
    let approvers = ["tg:7".to_string(), "tg:8".to_string()];
    store
        .approvals()
        .insert(&NewApproval {
            requested_by: Some("tg:1"),
            summary: "deploy",
            risk: switchboard_core::Risk::High,
            channel: Some("telegram.main"),
            chat: Some("-100"),
            deadline_at: store.now_ms() + 60_000,
            approvals_required: 2,
            ..support::approval("two", &approvers)
        })
        .await
        .unwrap();
    let allow = |person: &'static str, user: &'static str| Allow {
        approval: "two",
        person,
        user_id: user,
        choice: "once",
        from: "telegram.main:-100",
    };
    assert_eq!(
        store.count_allow(&allow("person:ann", "tg:7")).await.unwrap(),
        Counted::Now(1)
    );
    // The same person again, from another of their ids: not counted.
    assert_eq!(
        store.count_allow(&allow("person:ann", "@ann:hs")).await.unwrap(),
        Counted::Again
    );
    assert_eq!(
        store.count_allow(&allow("tg:8", "tg:8")).await.unwrap(),
        Counted::Now(2)
    );
    let row = store.approvals().get("two").await.unwrap().unwrap();
    assert_eq!(
        (row.approvals_required, row.allows, row.status),
        (2, 2, ApprovalStatus::Pending)
    );
    let who: Vec<String> = store
        .allows_of("two")
        .await
        .unwrap()
        .into_iter()
        .map(|v| v.user_id)
        .collect();
    assert_eq!(who, ["tg:7", "tg:8"]);
    store
        .approvals()
        .decide(
            "two",
            &switchboard_store::ApprovalEnd::unattended(ApprovalStatus::Expired, "test"),
        )
        .await
        .unwrap();
    assert_eq!(
        store.count_allow(&allow("tg:9", "tg:9")).await.unwrap(),
        Counted::NotPending
    );
    store.close().await;
}
