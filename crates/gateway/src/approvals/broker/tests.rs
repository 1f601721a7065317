//! The route broker's decisions: who may decide from where, and two
//! decisions of one request at once.

use super::*;

/// The id a decision names must belong to the platform it came through:
/// `tg:7` in a local chat is someone typing a Telegram id, not tg:7.
#[tokio::test]
async fn a_decision_counts_only_from_the_platform_of_the_id() {
    let peers = crate::test_peers::team_channel().await;
    let broker = RouteBroker::new(
        Arc::new(
            Config::load(std::path::Path::new(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../config/switchboard.toml"
            )))
            .unwrap(),
        ),
        peers.store.clone(),
        peers.channels.clone(),
    );
    let (tx, mut rx) = oneshot::channel();
    broker.pending.lock().insert(
        "ab12".into(),
        Pending {
            approvers: vec!["tg:7".into()],
            tx,
        },
    );
    let local = ChatAddress::new("local.team", "c1");
    let answer = broker
        .decide(
            "ab12",
            Ballot::new(&UserId("tg:7".into()), &local, ApprovalChoice::AllowOnce),
        )
        .await;
    assert!(
        answer.contains("cannot decide approval ab12 from local.team"),
        "{answer}"
    );
    assert!(rx.try_recv().is_err(), "nothing was decided");
    let telegram = ChatAddress::new("telegram.main", "-100");
    let answer = broker
        .decide(
            "ab12",
            Ballot::new(&UserId("tg:7".into()), &telegram, ApprovalChoice::AllowOnce),
        )
        .await;
    assert_eq!(answer, "Approval ab12: allowed once.");
    assert_eq!(rx.try_recv().unwrap().by, "tg:7");
}

/// Two gateways decide one request at once: the decision written first
/// stands, and it is the one the waiting tool call acts on.
#[tokio::test]
async fn of_two_decisions_at_once_the_recorded_one_stands() {
    let peers = crate::test_peers::team_channel().await;
    let config = Arc::new(
        Config::load(std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../config/switchboard.toml"
        )))
        .unwrap(),
    );
    let broker = RouteBroker::new(config, peers.store.clone(), peers.channels.clone());
    let req = switchboard_runtime::ApprovalRequest {
        id: "race1".into(),
        agent: "main".into(),
        caller_chain: Vec::new(),
        tool: "shell".into(),
        summary: "rm x".into(),
        risk: "medium".into(),
        profile_name: "default".into(),
        route: None,
        origin: None,
        requested_by: Some("cli:ann".into()),
        run_id: None,
        originator_may_decide: false,
        timeout_secs: 60,
    };
    let at = ChatAddress::new("local.team", "ops");
    super::super::record::store_request(
        &peers.store,
        &req,
        &at,
        &["cli:x".into(), "cli:y".into()],
        now_ms() + 60_000,
    )
    .await
    .unwrap();
    // Another gateway's "deny" is written first...
    let denied = ApprovalEnd {
        status: ApprovalStatus::Denied,
        by: Some("cli:x"),
        from: Some("local.team"),
        reason: None,
    };
    assert!(peers.store.decide_approval("race1", &denied).await.unwrap());
    // ...then this one's "allow" arrives: the deny stands.
    let allow = Decision {
        choice: ApprovalChoice::AllowOnce,
        by: "cli:y".into(),
        from: "local.team".into(),
        reason: None,
    };
    let stands = broker.settle("race1", allow).await.expect("a decision stands");
    assert_eq!((stands.choice, stands.by.as_str()), (ApprovalChoice::Deny, "cli:x"));
    let row = peers.store.approval("race1").await.unwrap().unwrap();
    assert_eq!(
        (row.status, row.decided_by.as_deref()),
        (ApprovalStatus::Denied, Some("cli:x"))
    );
}
