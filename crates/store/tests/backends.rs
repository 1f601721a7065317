//! The same store behaviour on SQLite and, when `SWITCHBOARD_TEST_POSTGRES_URL`
//! names a server (CI starts one), on PostgreSQL.

use switchboard_store::{
    ApprovalEnd, ApprovalStatus, NewApproval, NewInbound, NewRun, QueuedReply, RunEnd, RunKind, RunRow, RunStatus,
    Store, utc_day,
};

/// A fresh database on the PostgreSQL test server, if there is one.
async fn postgres_url() -> Option<String> {
    let admin = std::env::var("SWITCHBOARD_TEST_POSTGRES_URL").ok()?;
    let name = format!("sb_test_{}", uuid::Uuid::new_v4().simple());
    let pool = sqlx::PgPool::connect(&admin).await.expect("postgres admin connection");
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&pool)
        .await
        .unwrap();
    let (base, _) = admin.rsplit_once('/').unwrap();
    Some(format!("{base}/{name}"))
}

/// `$test` (an async fn taking a database URL) as two tests: on a fresh
/// SQLite file (in a folder that does not exist yet), and on a fresh
/// PostgreSQL database when `SWITCHBOARD_TEST_POSTGRES_URL` names a server.
macro_rules! on_both_backends {
    ($name:ident, $test:ident) => {
        mod $name {
            #[tokio::test]
            async fn sqlite() {
                let dir = tempfile::tempdir().unwrap();
                super::$test(&format!(
                    "sqlite://{}/nested/control_plane.db",
                    dir.path().display()
                ))
                .await;
            }

            #[tokio::test]
            async fn postgres() {
                let Some(url) = super::postgres_url().await else {
                    eprintln!(
                        "SWITCHBOARD_TEST_POSTGRES_URL not set; {} not exercised on PostgreSQL here",
                        stringify!($name)
                    );
                    return;
                };
                super::$test(&url).await;
            }
        }
    };
}

on_both_backends!(everything, backend);
on_both_backends!(inbox_table, inbox);
on_both_backends!(lease_table, leases);

/// Everything the store does, then reopened: nothing is lost (and running
/// the migrations again changes nothing).
async fn backend(url: &str) {
    let store = Store::open(url).await.unwrap();
    exercise(&store).await;
    store.close().await;
    let store = Store::open(url).await.unwrap();
    assert_eq!(store.history("s1", 10).await.unwrap().len(), 1);
    assert_eq!(store.cursor("telegram.main").await.unwrap().as_deref(), Some("42"));
}

async fn exercise(store: &Store) {
    // Sessions and transcripts, with /new keeping old rows.
    store
        .ensure_session("s1", "main", Some("cli"), Some("local"), None)
        .await
        .unwrap();
    store
        .ensure_session("s1", "main", Some("cli"), Some("local"), None)
        .await
        .unwrap();
    for i in 0..5 {
        store.append_message("s1", "user", &format!("m{i}")).await.unwrap();
    }
    let h = store.history("s1", 3).await.unwrap();
    assert_eq!(
        h.iter().map(|m| m.body.as_str()).collect::<Vec<_>>(),
        ["m2", "m3", "m4"]
    );
    store.reset_session("s1").await.unwrap();
    assert!(store.history("s1", 10).await.unwrap().is_empty());
    store.append_message("s1", "user", "after").await.unwrap();
    assert_eq!(store.history("s1", 10).await.unwrap().len(), 1);
    store.set_model_override("s1", Some("backup")).await.unwrap();
    assert_eq!(
        store.session("s1").await.unwrap().unwrap().model_override.as_deref(),
        Some("backup")
    );

    // Memory: upsert, allowlist, search.
    store.memory_store("main", "db", "postgres on port 5432").await.unwrap();
    store.memory_store("main", "db", "postgres on port 5433").await.unwrap();
    store
        .memory_store("reviewer", "style", "prefer small PRs")
        .await
        .unwrap();
    store.memory_store("other", "secret", "not for main").await.unwrap();
    let rows = store.memory_recall(&["main".into()], "PORT", 10).await.unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].content, "postgres on port 5433");
    let rows = store
        .memory_recall(&["main".into(), "reviewer".into()], "", 10)
        .await
        .unwrap();
    assert_eq!(rows.len(), 2);
    assert!(rows.iter().all(|r| r.agent != "other"));

    // Cost ledger.
    let day = utc_day(switchboard_store::now_ms());
    store.record_cost("main", "p", &day, usage(100, 50, 7)).await.unwrap();
    store.record_cost("main", "q", &day, usage(10, 5, 3)).await.unwrap();
    store.record_cost("reviewer", "p", &day, usage(1, 1, 1)).await.unwrap();
    let c = store.agent_cost("main", &day).await.unwrap();
    assert_eq!((c.calls, c.tokens_in, c.tokens_out, c.cost_micros), (2, 110, 55, 10));
    assert_eq!(store.total_cost(&day[..7]).await.unwrap().cost_micros, 11);
    assert_eq!(store.agent_cost("main", "1999-01-01").await.unwrap().calls, 0);
    let (agents, providers) = store.cost_breakdown(&day[..7]).await.unwrap();
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
    assert_eq!(store.cursor("telegram.main").await.unwrap(), None);
    store.set_cursor("telegram.main", "41").await.unwrap();
    store.set_cursor("telegram.main", "42").await.unwrap();
    assert_eq!(store.cursor("telegram.main").await.unwrap().as_deref(), Some("42"));

    // Approvals: decide once, expire the rest.
    for id in ["a1", "a2"] {
        store
            .insert_approval(&NewApproval {
                id,
                run_id: None,
                requested_by: Some("cli:bob"),
                agent: "main",
                caller_chain: "main",
                tool: "shell",
                summary: "ls",
                risk: "medium",
                channel: Some("cli"),
                chat: Some("local"),
                thread: None,
                approvers: "[\"cli:ops\"]",
                deadline_at: 0,
            })
            .await
            .unwrap();
    }
    assert!(
        store
            .decide_approval(
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
            .decide_approval(
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
        store.approval("a2").await.unwrap().unwrap().status,
        ApprovalStatus::Expired
    );
    assert_eq!(
        store.approval("a1").await.unwrap().unwrap().decided_by.as_deref(),
        Some("cli:ops")
    );
    assert!(reclaimed.lost_runs.is_empty());
    run_rows(store).await;
    console_sign_in(store).await;
}

/// Console links work once and only while fresh; sessions are found by
/// their id only while they last.
async fn console_sign_in(store: &Store) {
    let token = store.create_console_link("cli:alice", 600_000).await.unwrap();
    assert_eq!(token.len(), 64);
    assert_eq!(store.use_console_link("nope").await.unwrap(), None);
    assert_eq!(
        store.use_console_link(&token).await.unwrap().as_deref(),
        Some("cli:alice")
    );
    assert_eq!(
        store.use_console_link(&token).await.unwrap(),
        None,
        "a second use is refused"
    );
    let stale = store.create_console_link("cli:alice", -1).await.unwrap();
    assert_eq!(
        store.use_console_link(&stale).await.unwrap(),
        None,
        "an expired link is refused"
    );

    let (id, csrf) = store.create_console_session("cli:alice", 600_000).await.unwrap();
    assert_ne!(id, csrf);
    let s = store.console_session(&id).await.unwrap().unwrap();
    assert_eq!((s.user_id.as_str(), s.csrf.as_str()), ("cli:alice", csrf.as_str()));
    assert_eq!(
        store.console_session(&csrf).await.unwrap(),
        None,
        "the CSRF token is not a session id"
    );
    let (old, _) = store.create_console_session("cli:alice", -1).await.unwrap();
    assert_eq!(
        store.console_session(&old).await.unwrap(),
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
    let created_at = store.insert_run(&new).await.unwrap();
    let end = RunEnd {
        output: Some("all fine"),
        error: None,
        tokens_in: 12,
        tokens_out: 3,
        cost_micros: 0,
        progress: Some(r#"{"iterations":1}"#),
    };
    assert!(store.finish_run("r1", RunStatus::Completed, &end).await.unwrap());
    let stored = store.run("r1").await.unwrap().unwrap();
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
            .finish_run("r1", RunStatus::Cancelled, &RunEnd::default())
            .await
            .unwrap()
    );
}

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
        .take_inbound(
            "telegram.main",
            &[message("k1", "5"), message("k2", "6")],
            Some("7"),
            None,
        )
        .await
        .unwrap();
    assert_eq!(fresh, [true, true]);
    assert_eq!(store.cursor("telegram.main").await.unwrap().as_deref(), Some("7"));
    // The same platform message again (another key): not taken twice.
    let again = store
        .take_inbound("telegram.main", &[message("k3", "5")], Some("8"), None)
        .await
        .unwrap();
    assert_eq!(again, [false]);
    assert_eq!(store.cursor("telegram.main").await.unwrap().as_deref(), Some("8"));
    assert_eq!(store.inbox_counts().await.unwrap(), (2, 0));

    // Answered: done, and the reply waits in the outbox (leased to this
    // instance, so the outbox worker does not see it yet).
    let reply = QueuedReply {
        channel: "telegram.main",
        chat: "11",
        thread: None,
        reply_to: Some("5"),
        body: "the answer",
    };
    store.finish_inbound("k1", Some(&reply)).await.unwrap();
    assert_eq!(store.inbox_counts().await.unwrap(), (1, 1));
    assert!(store.due_announcements(10).await.unwrap().is_empty());
    store.reply_to_outbox("k1", "channel down").await.unwrap();
    let due = store.due_announcements(10).await.unwrap();
    assert_eq!(due.len(), 1);
    assert_eq!(
        (due[0].body.as_str(), due[0].reply_to.as_deref()),
        ("the answer", Some("5"))
    );
    // A second finish (a re-run) queues nothing more.
    store.finish_inbound("k1", Some(&reply)).await.unwrap();
    assert_eq!(store.due_announcements(10).await.unwrap().len(), 1);

    // k2 belongs to no registered instance: the next process adopts it.
    store.register_instance("host", 1, "run").await.unwrap();
    let adopted = store.adopt_orphan_inbound().await.unwrap();
    assert_eq!(adopted.iter().map(|r| r.key.as_str()).collect::<Vec<_>>(), ["k2"]);
    assert!(store.adopt_orphan_inbound().await.unwrap().is_empty(), "adopted once");

    // Pruning keeps what is younger than the retention.
    assert_eq!(store.prune_inbound(3_600_000).await.unwrap(), 0);
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    assert_eq!(store.prune_inbound(1).await.unwrap(), 1);
    assert_eq!(store.inbox_counts().await.unwrap(), (1, 0));
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

/// Two instances on one database: one holds a channel's lease; the other
/// takes it only once it runs out, with a new generation; the old owner's
/// cursor write under its old generation changes nothing (fencing); a cron
/// slot is claimed once.
async fn leases(url: &str) {
    let (a, b) = (Store::open(url).await.unwrap(), Store::open(url).await.unwrap());
    a.register_instance("host-a", 1, "run").await.unwrap();
    b.register_instance("host-b", 2, "run").await.unwrap();
    let ga = a
        .acquire_lease("telegram.main", 60_000)
        .await
        .unwrap()
        .expect("free at first");
    assert_eq!(
        a.acquire_lease("telegram.main", 60_000).await.unwrap(),
        Some(ga),
        "kept by its owner"
    );
    assert_eq!(
        b.acquire_lease("telegram.main", 60_000).await.unwrap(),
        None,
        "held by a"
    );
    assert!(a.renew_lease("telegram.main", ga).await.unwrap());
    a.take_inbound("telegram.main", &[], Some("10"), Some(ga))
        .await
        .unwrap();
    // The lease runs out (a lease time of 0 ms, and a moment passes): b
    // takes it.
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let gb = b
        .acquire_lease("telegram.main", 0)
        .await
        .unwrap()
        .expect("expired, so free");
    assert!(gb > ga);
    b.take_inbound("telegram.main", &[], Some("20"), Some(gb))
        .await
        .unwrap();
    // a wakes up: its renewal and its cursor write are refused.
    assert!(!a.renew_lease("telegram.main", ga).await.unwrap());
    let message = NewInbound {
        key: "late".into(),
        channel: "telegram.main".into(),
        chat: "1".into(),
        platform_id: "99".into(),
        sender: "tg:1".into(),
        body: "{}".into(),
    };
    assert!(
        a.take_inbound("telegram.main", &[message], Some("15"), Some(ga))
            .await
            .is_err()
    );
    assert_eq!(
        b.cursor("telegram.main").await.unwrap().as_deref(),
        Some("20"),
        "never moved back"
    );
    assert_eq!(
        b.inbox_counts().await.unwrap().0,
        0,
        "nothing of the refused take was written"
    );
    // A clean stop frees it at once.
    b.release_lease("telegram.main", gb).await.unwrap();
    assert!(a.acquire_lease("telegram.main", 60_000).await.unwrap().is_some());
    assert!(a.claim_cron_slot("nightly", 1_000).await.unwrap());
    assert!(!b.claim_cron_slot("nightly", 1_000).await.unwrap(), "fired once");
    assert!(b.claim_cron_slot("nightly", 2_000).await.unwrap());
    assert_eq!(a.leases().await.unwrap().len(), 1);
}

fn usage(tokens_in: i64, tokens_out: i64, cost_micros: i64) -> switchboard_store::CostTotals {
    switchboard_store::CostTotals {
        calls: 1,
        tokens_in,
        tokens_out,
        cost_micros,
    }
}
