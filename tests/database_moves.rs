//! PostgreSQL restarted, then moved to another port after a 30 s outage,
//! under a running cluster (docs/operations.md, "What happens when the
//! database goes away"). The server is the test's own (the shared one
//! stays up for the other tests); the gateways are given both addresses
//! in one `database_url` (`host:a,host:b`). Direct messages arrive every
//! second throughout and an approval waits across both. Nothing restarts,
//! no live instance is taken for dead, every message is answered exactly
//! once, and the approval is decided once.

mod cluster_fx;
mod support;

use cluster_fx::*;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use switchboard_test_support::Step;
use switchboard_test_support::pg_server::{PgServer, free_port};
use switchboard_test_support::telegram::{private_chat, user};

/// How long the database is away before it comes back on the other port.
const OUTAGE: Duration = Duration::from_secs(30);

/// Person `i` writes one direct message (chat and user id `1000 + i`).
fn dm(c: &Cluster, i: usize) {
    let id = 1000 + i as i64;
    c.model
        .push(Step::text(format!("answer {i:03}.")).when_last_contains(&format!("question {i:03}.")));
    c.tg.message(
        private_chat(id, "P"),
        user(id, "P"),
        &format!("question {i:03}."),
        None,
        None,
    );
}

/// The answers sent so far, by person.
fn answers(c: &Cluster) -> BTreeMap<usize, usize> {
    let mut by = BTreeMap::new();
    for t in texts(&c.tg) {
        if let Some(n) = t.strip_prefix("answer ").and_then(|r| r.strip_suffix('.')) {
            *by.entry(n.parse().unwrap()).or_default() += 1;
        }
    }
    by
}

/// Send DMs, one a second, for `span`; the next person's number.
async fn dms_for(c: &Cluster, mut next: usize, span: Duration) -> usize {
    let until = Instant::now() + span;
    while Instant::now() < until {
        dm(c, next);
        next += 1;
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    next
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_and_moved_database_loses_and_doubles_nothing() {
    if std::env::var("SWITCHBOARD_TEST_POSTGRES_URL").is_err() {
        eprintln!("SWITCHBOARD_TEST_POSTGRES_URL not set; the PostgreSQL tests do not run here");
        return;
    }
    let Some(server) = PgServer::start() else {
        panic!("PostgreSQL's binaries are missing (set SWITCHBOARD_TEST_PG_BIN)");
    };
    let first = server.database("moves");
    let (a_port, b_port) = (server.port(), free_port());
    let both = first.replace(
        &format!("127.0.0.1:{a_port}"),
        &format!("127.0.0.1:{a_port},127.0.0.1:{b_port}"),
    );
    let c = cluster_on(&both, [&[], &[], &[]], |cfg| cfg).await;
    let a = owner(&c, None, 20).await;
    let id = ask_for_an_approval(&c, a).await;
    let pids: Vec<_> = c.nodes.iter().map(|n| n.gw.pid()).collect();

    // A restart on the same port, between messages.
    let mut next = dms_for(&c, 0, Duration::from_secs(3)).await;
    server.stop();
    next = dms_for(&c, next, Duration::from_secs(3)).await;
    server.start_on(a_port);
    readiness(&c.nodes[a], 200, 30).await;
    next = dms_for(&c, next, Duration::from_secs(3)).await;

    // Away for 30 s, then back on the other port.
    let before = answers(&c).values().sum::<usize>();
    server.stop();
    let gone = Instant::now();
    let first_away = next;
    next = dms_for(&c, next, Duration::from_secs(5)).await;
    let body = readiness(&c.nodes[a], 503, 10).await;
    assert!(
        body.contains("\"database\"") && !body.contains("\"database\":\"ok\""),
        "{body}"
    );
    next = dms_for(&c, next, OUTAGE.saturating_sub(gone.elapsed())).await;
    let during = answers(&c).values().sum::<usize>() - before;
    server.start_on(b_port);
    let back = Instant::now();
    println!(
        "the database was away for {:.1} s; {during} answers were sent meanwhile",
        gone.elapsed().as_secs_f64()
    );

    // Each person's answer, timed from the database's return.
    let mut resumed = BTreeMap::new();
    let deadline = back + Duration::from_secs(90);
    while resumed.len() < next - first_away && Instant::now() < deadline {
        for (&i, _) in answers(&c).iter().filter(|(i, _)| **i >= first_away) {
            resumed.entry(i).or_insert_with(|| back.elapsed().as_secs_f64());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    readiness(&c.nodes[a], 200, 10).await;
    let mut times: Vec<f64> = resumed.values().copied().collect();
    times.sort_by(f64::total_cmp);
    assert_eq!(
        times.len(),
        next - first_away,
        "every DM of the outage answered: {resumed:?}"
    );
    println!(
        "{} DMs written while the database was away: answered {:.1} s (p50) and {:.1} s (p99) after it came back",
        times.len(),
        percentile(&times, 0.5),
        percentile(&times, 0.99)
    );

    // Two leases of sweeps by every instance, then the approval.
    tokio::time::sleep(Duration::from_secs(2 * LEASE)).await;
    decide_once(&c, a, &id).await;
    c.tg.wait_sent_to(11, 1, 20).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let got = answers(&c);
    assert_eq!(got.len(), next, "every DM answered: {got:?}");
    assert!(got.values().all(|n| *n == 1), "none twice: {got:?}");
    let stored = texts(&c.tg).iter().filter(|t| *t == "Stored.").count();
    assert_eq!(stored, 1, "the approved call ran once");
    let mut told = BTreeMap::new();
    for m in c.tg.sent().iter().filter(|m| m["text"] == WAITS) {
        *told.entry(m["chat"]["id"].as_i64().unwrap()).or_insert(0) += 1;
    }
    assert!(
        told.values().all(|n| *n == 1),
        "each person told once that the message waits: {told:?}"
    );
    let now: Vec<_> = c.nodes.iter().map(|n| n.gw.pid()).collect();
    assert_eq!(pids, now, "no gateway restarted");
    no_instance_taken_for_dead(&c);
    assert!(
        c.nodes
            .iter()
            .any(|n| n.gw.log().contains("the database answers on another server now")),
        "the move was noticed"
    );
}
