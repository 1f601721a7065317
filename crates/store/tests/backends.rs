//! The same store behaviour on SQLite and, when `SWITCHBOARD_TEST_POSTGRES_URL`
//! names a server (CI starts one), on PostgreSQL.

use switchboard_store::{
    ApprovalEnd, ApprovalStatus, NewApproval, NewRun, RunEnd, RunKind, RunRow, RunStatus, SessionPlace, Store, utc_day,
};

mod support;

on_both_backends!(everything, backend);

/// Everything the store does, then reopened: nothing is lost (and running
/// the migrations again changes nothing).
async fn backend(url: &str) {
    let store = Store::open(url).await.unwrap();
    exercise(&store).await;
    store.close().await;
    let store = Store::open(url).await.unwrap();
    assert_eq!(store.sessions().history("s1", 10).await.unwrap().len(), 2);
    assert_eq!(
        store.cursors().get("telegram.main").await.unwrap().as_deref(),
        Some("42")
    );
}

async fn exercise(store: &Store) {
    // Sessions and transcripts, with /new keeping old rows.
    store
        .sessions()
        .ensure("s1", "main", Some("cli"), Some("local"), None)
        .await
        .unwrap();
    store
        .sessions()
        .ensure("s1", "main", Some("cli"), Some("local"), None)
        .await
        .unwrap();
    for i in 0..5 {
        store.sessions().append("s1", "user", &format!("m{i}")).await.unwrap();
    }
    let h = store.sessions().history("s1", 3).await.unwrap();
    assert_eq!(
        h.iter().map(|m| m.body.as_str()).collect::<Vec<_>>(),
        ["m2", "m3", "m4"]
    );
    store.sessions().reset("s1").await.unwrap();
    assert!(store.sessions().history("s1", 10).await.unwrap().is_empty());
    store.sessions().append("s1", "user", "after").await.unwrap();
    assert_eq!(store.sessions().history("s1", 10).await.unwrap().len(), 1);
    store.sessions().set_model_override("s1", Some("backup")).await.unwrap();
    // A turn opening on a stored session: its activity time moves and
    // the user message is appended (the /new mark and the model choice
    // stay).
    let before = store.sessions().get("s1").await.unwrap().unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    store
        .sessions()
        .open_turn(
            (
                "s1",
                "other",
                SessionPlace {
                    channel: Some("x"),
                    chat: Some("y"),
                    thread: None,
                },
            ),
            Some("t1"),
            &[("user", "asked".to_string())],
        )
        .await
        .unwrap();
    let after = store.sessions().get("s1").await.unwrap().unwrap();
    assert!(after.updated_at > before.updated_at);
    assert_eq!(
        (after.agent.as_str(), after.channel.as_deref(), after.history_from),
        ("main", Some("cli"), before.history_from)
    );
    let turn = store.sessions().turn_messages("s1", "t1").await.unwrap();
    assert_eq!(
        turn.iter()
            .map(|m| (m.role.as_str(), m.body.as_str()))
            .collect::<Vec<_>>(),
        [("user", "asked")]
    );
    assert_eq!(store.sessions().history("s1", 10).await.unwrap().len(), 2);
    store
        .sessions()
        .open_turn(
            ("s2", "main", SessionPlace::default()),
            None,
            &[("user", "hi".to_string())],
        )
        .await
        .unwrap();
    assert!(
        store.sessions().get("s2").await.unwrap().is_some(),
        "created when missing"
    );
    assert_eq!(store.sessions().history("s2", 10).await.unwrap().len(), 1);
    assert_eq!(
        store
            .sessions()
            .get("s1")
            .await
            .unwrap()
            .unwrap()
            .model_override
            .as_deref(),
        Some("backup")
    );

    // Memory: upsert, allowlist, search.
    store.memory().put("main", "db", "postgres on port 5432").await.unwrap();
    store.memory().put("main", "db", "postgres on port 5433").await.unwrap();
    store
        .memory()
        .put("reviewer", "style", "prefer small PRs")
        .await
        .unwrap();
    store.memory().put("other", "secret", "not for main").await.unwrap();
    let rows = store.memory().recall(&["main".into()], "PORT", 10).await.unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].content, "postgres on port 5433");
    let rows = store
        .memory()
        .recall(&["main".into(), "reviewer".into()], "", 10)
        .await
        .unwrap();
    assert_eq!(rows.len(), 2);
    assert!(rows.iter().all(|r| r.agent != "other"));

    // Cost ledger.
    let day = utc_day(switchboard_store::now_ms());
    store
        .costs()
        .record("main", "p", &day, usage(100, 50, 7))
        .await
        .unwrap();
    store.costs().record("main", "q", &day, usage(10, 5, 3)).await.unwrap();
    store
        .costs()
        .record("reviewer", "p", &day, usage(1, 1, 1))
        .await
        .unwrap();
    let c = store.costs().of_agent("main", &day).await.unwrap();
    assert_eq!((c.calls, c.tokens_in, c.tokens_out, c.cost_micros), (2, 110, 55, 10));
    assert_eq!(store.costs().total(&day[..7]).await.unwrap().cost_micros, 11);
    assert_eq!(store.costs().of_agent("main", "1999-01-01").await.unwrap().calls, 0);
    let (agents, providers) = store.costs().breakdown(&day[..7]).await.unwrap();
    assert_eq!(
        agents
            .iter()
            .map(|(a, c)| (a.as_str(), c.cost_micros))
            .collect::<Vec<_>>(),
        [("main", 10), ("reviewer", 1)]
    );
    assert_eq!(
        providers
            .iter()
            .map(|(p, c)| (p.as_str(), c.calls, c.cost_micros))
            .collect::<Vec<_>>(),
        [("p", 2, 8), ("q", 1, 3)]
    );

    // Cursors.
    assert_eq!(store.cursors().get("telegram.main").await.unwrap(), None);
    store.cursors().set("telegram.main", "41").await.unwrap();
    store.cursors().set("telegram.main", "42").await.unwrap();
    assert_eq!(
        store.cursors().get("telegram.main").await.unwrap().as_deref(),
        Some("42")
    );

    // Approvals: decide once, expire the rest.
    let (main, ops) = (["main".to_string()], ["cli:ops".to_string()]);
    for id in ["a1", "a2"] {
        let asked = NewApproval {
            caller_chain: &main,
            channel: Some("cli"),
            chat: Some("local"),
            deadline_at: 0,
            ..support::approval(id, &ops)
        };
        store.approvals().insert(&asked).await.unwrap();
    }
    assert!(
        store
            .approvals()
            .decide(
                "a1",
                &ApprovalEnd {
                    status: ApprovalStatus::Approved,
                    by: Some("cli:ops"),
                    from: Some("cli:local"),
                    reason: None
                }
            )
            .await
            .unwrap()
    );
    assert!(
        !store
            .approvals()
            .decide(
                "a1",
                &ApprovalEnd {
                    status: ApprovalStatus::Denied,
                    by: Some("cli:x"),
                    from: None,
                    reason: None
                }
            )
            .await
            .unwrap()
    );
    // No process is registered here: every pending request is an orphan.
    let reclaimed = store.reclaim(&[]).await.unwrap();
    assert_eq!(reclaimed.expired_approvals.len(), 1);
    assert_eq!(
        store.approvals().get("a2").await.unwrap().unwrap().status,
        ApprovalStatus::Expired
    );
    // The list columns come back as lists.
    let a2 = store.approvals().get("a2").await.unwrap().unwrap();
    assert_eq!(
        (a2.caller_chain, a2.approvers),
        (vec!["main".to_string()], vec!["cli:ops".to_string()])
    );
    assert_eq!(
        store
            .approvals()
            .get("a1")
            .await
            .unwrap()
            .unwrap()
            .decided_by
            .as_deref(),
        Some("cli:ops")
    );
    assert!(reclaimed.lost_runs.is_empty());
    run_rows(store).await;
    console_sign_in(store).await;
}

/// Console links work once and only while fresh; sessions are found by
/// their id only while they last.
async fn console_sign_in(store: &Store) {
    let token = store.console().create_link("cli:alice", 600_000).await.unwrap();
    assert_eq!(token.len(), 64);
    assert_eq!(store.console().use_link("nope").await.unwrap(), None);
    assert_eq!(
        store.console().use_link(&token).await.unwrap().as_deref(),
        Some("cli:alice")
    );
    assert_eq!(
        store.console().use_link(&token).await.unwrap(),
        None,
        "a second use is refused"
    );
    let stale = store.console().create_link("cli:alice", -1).await.unwrap();
    assert_eq!(
        store.console().use_link(&stale).await.unwrap(),
        None,
        "an expired link is refused"
    );

    let (id, csrf) = store.console().create_session("cli:alice", 600_000).await.unwrap();
    assert_ne!(id, csrf);
    let s = store.console().session(&id).await.unwrap().unwrap();
    assert_eq!((s.user_id.as_str(), s.csrf.as_str()), ("cli:alice", csrf.as_str()));
    assert_eq!(
        store.console().session(&csrf).await.unwrap(),
        None,
        "the CSRF token is not a session id"
    );
    let (old, _) = store.console().create_session("cli:alice", -1).await.unwrap();
    assert_eq!(
        store.console().session(&old).await.unwrap(),
        None,
        "an ended session is refused"
    );
}

/// A finished run's row as rebuilt in memory (for its announcement) is the
/// row as stored.
async fn run_rows(store: &Store) {
    let new = NewRun {
        id: "r1".into(),
        kind: RunKind::Delegate,
        parent_id: Some("p".into()),
        root_id: "p".into(),
        owner_chain: vec!["main".into(), "ops".into()],
        depth: 1,
        agent: "ops".into(),
        session_key: "agent:ops:delegate:1".into(),
        origin_channel: Some("local.team".into()),
        origin_chat: Some("room".into()),
        origin_thread: None,
        label: Some("background".into()),
        task: Some("check the disks".into()),
        model: Some("m".into()),
        requester: Some("local:ann".into()),
        requester_session: Some("s1".into()),
        announce: true,
    };
    let created_at = store.runs().insert(&new).await.unwrap();
    // Owners are matched exactly: `_` and `%` in an alias are not wildcards.
    let lookalike = NewRun {
        id: "r-lookalike".into(),
        owner_chain: vec!["mXin".into()],
        ..new.clone()
    };
    store.runs().insert(&lookalike).await.unwrap();
    let owned = |alias: &'static str| async move {
        let rows = store.runs().owned_by(RunKind::Delegate, alias, 10).await.unwrap();
        rows.into_iter().map(|r| r.id).collect::<Vec<_>>()
    };
    assert_eq!(owned("main").await, vec!["r1".to_string()]);
    assert_eq!(owned("mXin").await, vec!["r-lookalike".to_string()]);
    assert!(owned("m_in").await.is_empty() && owned("m%").await.is_empty());
    let end = RunEnd {
        output: Some("all fine"),
        error: None,
        tokens_in: 12,
        tokens_out: 3,
        cost_micros: 0,
        progress: Some(r#"{"iterations":1}"#),
    };
    assert!(store.runs().finish("r1", RunStatus::Completed, &end).await.unwrap());
    let stored = store.runs().get("r1").await.unwrap().unwrap();
    let rebuilt = new.ended(created_at, store.now_ms(), RunStatus::Completed, &end);
    assert!(rebuilt.ended_at.unwrap() >= stored.ended_at.unwrap());
    let without_end = |r: &RunRow| {
        format!(
            "{:?}",
            RunRow {
                ended_at: None,
                ..r.clone()
            }
        )
    };
    assert_eq!(without_end(&rebuilt), without_end(&stored));
    // A second ending is refused: the first one stays.
    assert!(
        !store
            .runs()
            .finish("r1", RunStatus::Cancelled, &RunEnd::default())
            .await
            .unwrap()
    );
}

#[tokio::test]
async fn unsupported_url_is_refused() {
    let err = Store::open("mysql://x").await.err().unwrap();
    assert!(err.to_string().contains("use sqlite://PATH"));
}

/// The control plane holds transcripts and approvals: its file and a folder
/// created for it are readable by their owner only.
#[tokio::test]
async fn a_new_sqlite_database_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new/cp.db");
    let store = Store::open(&format!("sqlite://{}", path.display())).await.unwrap();
    store.close().await;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(path.parent().unwrap()), 0o700);
}

fn usage(tokens_in: i64, tokens_out: i64, cost_micros: i64) -> switchboard_store::CostTotals {
    switchboard_store::CostTotals {
        calls: 1,
        tokens_in,
        tokens_out,
        cost_micros,
    }
}
