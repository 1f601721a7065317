//! Cluster members that stall or disagree: an owner paused past its lease
//! gives the bot up, a stalled instance runs no tool of a turn another
//! adopted, and hosts whose clocks are an hour apart keep to the
//! database's clock — three `switchboard run` processes on PostgreSQL.

mod cluster_fx;
mod support;

use cluster_fx::*;
use serde_json::json;
use std::time::{Duration, Instant};
use switchboard_test_support::Step;
use switchboard_test_support::telegram::{private_chat, user};

/// A paused old owner (SIGSTOP) loses its lease; resumed, it does not
/// write its stale cursor and gives the bot up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_owner_resumed_after_losing_its_lease_gives_the_bot_up() {
    let Some(c) = cluster("fencing").await else { return };
    let a = owner(&c, None, 20).await;
    c.nodes[a].gw.signal("STOP");
    let b = owner(&c, Some(a), 20).await;
    c.model
        .push(Step::text("answered by the new owner").when_last_contains("while paused"));
    c.tg.message(private_chat(11, "Ann"), user(11, "Ann"), "while paused", None, None);
    c.tg.wait_sent(1, 20).await;
    c.nodes[a].gw.signal("CONT");
    let deadline = Instant::now() + Duration::from_secs(15);
    while !c.nodes[a].gw.log().contains("another instance took the channel") {
        assert!(
            Instant::now() < deadline,
            "the old owner did not give the bot up:\n{}",
            c.nodes[a].gw.log()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    c.model
        .push(Step::text("still answered once").when_last_contains("after the pause"));
    c.tg.message(private_chat(11, "Ann"), user(11, "Ann"), "after the pause", None, None);
    c.tg.wait_sent(2, 20).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let sent = texts(&c.tg);
    assert_eq!(
        sent,
        ["answered by the new owner", "still answered once"],
        "nothing twice"
    );
    assert!(c.nodes[b].gw.log().contains(RUNS_IT));
}

/// An instance stalled (SIGSTOP) in the middle of a turn, past its lease:
/// another adopts the message and answers it. Woken up (SIGCONT), the
/// stalled one gets its model's answer — a tool call — and does not run
/// it (the message is no longer its), sends nothing, and registers under
/// a new id. The tool ran once, the person got one answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_instance_runs_no_tool_of_a_turn_another_adopted() {
    let Some(c) = cluster("stalled").await else { return };
    let a = owner(&c, None, 20).await;
    let append = json!({"path": "count.txt", "content": "ran\n", "append": true});
    // A's model call comes back after A has been stalled past its lease.
    c.model.push(
        Step::tool_call("file_write", append.clone())
            .when_last_contains("stall test")
            .delay(Duration::from_secs(3)),
    );
    // The instance that adopts the message runs the turn again.
    c.model
        .push(Step::tool_call("file_write", append).when_last_contains("stall test"));
    c.model.push(Step::text("answered once").when_last_contains("wrote"));
    c.tg.message(private_chat(12, "Bo"), user(12, "Bo"), "stall test", None, None);
    model_asked(&c, "stall test").await;
    c.nodes[a].gw.signal("STOP");
    let b = owner(&c, Some(a), 20).await;
    c.tg.wait_sent(1, 30).await;
    // Give A time to act on its model's answer, if it were going to.
    wake_and_let_act(&c, a).await;
    assert_eq!(texts(&c.tg), ["answered once"], "one answer");
    let ran_on = |i: usize| {
        std::fs::read_to_string(c.nodes[i].sandbox.path().join("workspace/main/count.txt")).unwrap_or_default()
    };
    let others: String = (0..c.nodes.len()).filter(|i| *i != a).map(ran_on).collect();
    assert_eq!(others, "ran\n", "the adopting instance ran the tool once");
    assert!(c.nodes[b].gw.log().contains(RUNS_IT));
    assert_eq!(
        ran_on(a),
        "",
        "the stalled instance ran nothing:\n{}",
        c.nodes[a].gw.log()
    );
    let log = c.nodes[a].gw.log();
    assert!(log.contains("stopped every turn and run of this instance"), "{log}");
}

/// An instance stopped (SIGSTOP) in the middle of a database write, past
/// its lease: its open transaction holds the session's row. The server
/// ends that transaction (docs/operations.md, "A process taken for dead"),
/// so the instance that adopts the message writes and answers; woken up,
/// the stalled one finds its turn failed and the message another's, and
/// tells the person nothing (not that the database is away).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_stalled_in_a_write_holds_nobody_up_and_says_nothing() {
    let Some(c) = cluster("stalled_write").await else {
        return;
    };
    let a = owner(&c, None, 20).await;
    // A row of the session held by the test: A's write of the turn's
    // opening waits for it, and runs once it is let go, while A is stopped.
    let mut holder = hold(
        &c.database,
        "INSERT INTO sessions (key, agent, history_from, created_at, updated_at)
         VALUES ('agent:main:telegram.main:14', 'main', 0, 0, 0)",
    )
    .await;
    c.model.push(
        Step::text("from the stalled instance")
            .when_last_contains("write stall")
            .delay(Duration::from_secs(3)),
    );
    c.model
        .push(Step::text("answered once").when_last_contains("write stall"));
    c.tg.message(private_chat(14, "Di"), user(14, "Di"), "write stall", None, None);
    model_asked(&c, "write stall").await;
    // The model call runs beside the write.
    stop_while_a_write_waits(&c, a, &mut holder).await;
    owner(&c, Some(a), 20).await;
    c.tg.wait_sent(1, 30).await;
    wake_and_let_act(&c, a).await;
    assert_eq!(
        texts(&c.tg),
        ["answered once"],
        "one answer, and no word from the stalled one"
    );
}

/// The same, stopped inside the write that marks the message answered
/// (with its reply queued): the adopter finds the turn finished in the
/// transcript and sends its answer; woken up, the stalled one, whose
/// write failed, does not send it again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_stalled_marking_its_answer_does_not_send_it_twice() {
    let Some(c) = cluster("stalled_answer").await else {
        return;
    };
    let a = owner(&c, None, 20).await;
    c.model.push(
        Step::text("answered once")
            .when_last_contains("mark stall")
            .delay(Duration::from_secs(2)),
    );
    c.tg.message(private_chat(15, "Ed"), user(15, "Ed"), "mark stall", None, None);
    model_asked(&c, "mark stall").await;
    // The message's inbox row, held while the model answers: A's mark
    // waits for it.
    let mut holder = hold(&c.database, "SELECT key FROM inbox WHERE status = 'pending' FOR UPDATE").await;
    stop_while_a_write_waits(&c, a, &mut holder).await;
    owner(&c, Some(a), 20).await;
    c.tg.wait_sent(1, 30).await;
    wake_and_let_act(&c, a).await;
    assert_eq!(texts(&c.tg), ["answered once"], "sent once");
    assert_eq!(asked_about(&c, "mark stall"), 1, "the model was asked once");
}

/// A message held back behind a running turn (the turn waits for a
/// child run) when its instance is stopped past its lease: the adopter
/// answers it. Woken, the stalled instance stops the turn and does not run
/// the held message (the model is asked about it once).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_waiting_on_a_stalled_instance_is_not_run_there_after_it_wakes() {
    use sqlx::Connection;
    let Some(c) = cluster("stalled_queue").await else {
        return;
    };
    let a = owner(&c, None, 20).await;
    c.model.push(
        Step::tool_call("delegate", json!({"agent": "reviewer", "prompt": "slow check"}))
            .when_last_contains("queue first"),
    );
    // The child outlasts the test: the turn is in its tool until stopped.
    c.reviewer.push(Step::text("late").delay(Duration::from_secs(120)));
    for _ in 0..2 {
        c.model
            .push(Step::text("second answered").when_last_contains("queue second"));
    }
    c.tg.message(private_chat(16, "Flo"), user(16, "Flo"), "queue first", None, None);
    let deadline = Instant::now() + Duration::from_secs(15);
    while c.reviewer.requests().is_empty() {
        assert!(Instant::now() < deadline, "the child never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    c.tg.message(private_chat(16, "Flo"), user(16, "Flo"), "queue second", None, None);
    // Both taken by A before it stops.
    let mut db = sqlx::PgConnection::connect(&c.database).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while sqlx::query_scalar::<_, i64>("SELECT count(*) FROM inbox WHERE status = 'pending'")
        .fetch_one(&mut db)
        .await
        .unwrap()
        < 2
    {
        assert!(Instant::now() < deadline, "the second message was not taken");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    c.nodes[a].gw.signal("STOP");
    owner(&c, Some(a), 20).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while !texts(&c.tg).iter().any(|t| t == "second answered") {
        assert!(
            Instant::now() < deadline,
            "the adopter did not answer the second message: {:?}",
            texts(&c.tg)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    wake_and_let_act(&c, a).await;
    assert_eq!(asked_about(&c, "queue second"), 1, "the model was asked once");
    let answers = texts(&c.tg).iter().filter(|t| *t == "second answered").count();
    assert_eq!(answers, 1, "{:?}", texts(&c.tg));
}

/// A connection of the test's own in a transaction that ran `sql`.
async fn hold(pg: &str, sql: &'static str) -> sqlx::PgConnection {
    use sqlx::Connection;
    let mut holder = sqlx::PgConnection::connect(pg).await.unwrap();
    for sql in ["BEGIN", sql] {
        sqlx::query(sql).execute(&mut holder).await.unwrap();
    }
    holder
}

/// Once a write waits for what `holder` holds, stop instance `a` and let
/// the write go on: it runs, and leaves `a`'s transaction open.
async fn stop_while_a_write_waits(c: &Cluster, a: usize, holder: &mut sqlx::PgConnection) {
    use sqlx::Connection;
    let mut watcher = sqlx::PgConnection::connect(&c.database).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while sqlx::query_scalar::<_, i64>(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
    )
    .fetch_one(&mut watcher)
    .await
    .unwrap()
        == 0
    {
        assert!(Instant::now() < deadline, "no write waited for the held row");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    c.nodes[a].gw.signal("STOP");
    sqlx::query("ROLLBACK").execute(holder).await.unwrap();
}

/// Wait until the turn of the message `text` reached the model (not a
/// cron tick).
async fn model_asked(c: &Cluster, text: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while asked_about(c, text) == 0 {
        assert!(Instant::now() < deadline, "the turn never reached the model");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// How many model requests were about the message `text`.
fn asked_about(c: &Cluster, text: &str) -> usize {
    c.model
        .requests()
        .iter()
        .filter(|r| switchboard_test_support::last_message_text(r).contains(text))
        .count()
}

/// Wake stalled instance `a`, wait until it noticed it was taken for dead,
/// and give it time to act on what it had in hand, if it were going to.
async fn wake_and_let_act(c: &Cluster, a: usize) {
    c.nodes[a].gw.signal("CONT");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !c.nodes[a].gw.log().contains("registered again") {
        assert!(
            Instant::now() < deadline,
            "the stalled instance never noticed:\n{}",
            c.nodes[a].gw.log()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_secs(4)).await;
}

/// Hosts whose clocks are an hour apart: every time another instance
/// compares (heartbeats, leases, cron slots) is on the database's clock, so
/// nobody takes the others for dead, one instance runs the bot, a message
/// gets one answer and each cron slot fires once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instances_whose_clocks_are_an_hour_apart_keep_to_the_databases_clock() {
    if !std::path::Path::new(FAKETIME).exists() {
        assert!(
            std::env::var_os("SWITCHBOARD_TEST_REQUIRE_FAKETIME").is_none(),
            "{FAKETIME} is missing (apt-get install libfaketime)"
        );
        eprintln!("libfaketime is not installed; the clock-skew test did not run here");
        return;
    }
    let skewed = |by: &'static str| {
        [
            ("LD_PRELOAD", FAKETIME),
            ("FAKETIME", by),
            ("FAKETIME_DONT_FAKE_MONOTONIC", "1"),
        ]
    };
    let (behind, ahead) = (skewed("-1h"), skewed("+1h"));
    let Some(c) = cluster_with("skew", [&[], &behind, &ahead]).await else {
        return;
    };
    let first_minute = c.first_minute;
    owner(&c, None, 20).await;
    // Several leases pass: each instance sweeps for dead ones every beat.
    tokio::time::sleep(Duration::from_secs(4 * LEASE)).await;
    c.model.push(Step::text("one answer").when_last_contains("clock test"));
    c.tg.message(private_chat(13, "Cy"), user(13, "Cy"), "clock test", None, None);
    c.tg.wait_sent(1, 20).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(texts(&c.tg), ["one answer"]);
    for (i, node) in c.nodes.iter().enumerate() {
        let log = node.gw.log();
        assert!(!log.contains("took this instance for dead"), "instance {i}:\n{log}");
        assert!(!log.contains("stopped gateway process"), "instance {i}:\n{log}");
    }
    assert!(
        c.nodes[2].gw.log().contains("clock differs from the database"),
        "the instance an hour ahead is told"
    );
    let (code, out, err) =
        c.nodes[0]
            .sandbox
            .run(&["status", "--config", c.nodes[0].sandbox.config_path().to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.matches(", live").count(), 3, "{out}");
    let boundaries = (minute_now() - first_minute) as usize;
    let ticks = cron_ticks(&c.model);
    assert!(
        ticks == boundaries || ticks + 1 == boundaries,
        "one cron run per slot crossed ({boundaries}), on the database's clock: {ticks}"
    );
}
