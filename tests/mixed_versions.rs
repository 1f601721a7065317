//! A rolling upgrade under load (docs/operations.md, "Upgrades"): three
//! instances of the previous build (scripts/test.sh builds it from the
//! commit it names and sets SWITCHBOARD_TEST_OLD_SWITCHBOARD) share one
//! PostgreSQL database with a waiting approval while 20 direct messages a
//! second arrive, some of which delegate to another agent; then each is
//! stopped (SIGTERM) and replaced by this build, one at a time, so old and
//! new run side by side. Every message is answered exactly once, the
//! approval is decided once, nobody is taken for dead; how long messages
//! waited during the upgrade is printed beside the wait before it.

mod cluster_fx;
mod support;

use cluster_fx::*;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use switchboard_test_support::Step;
use switchboard_test_support::telegram::{private_chat, user};

/// Messages a second.
const RATE: u64 = 20;

/// The load: who wrote when, and when each was answered.
#[derive(Default)]
struct Load {
    sent: Vec<Instant>,
    answered: BTreeMap<usize, (Instant, usize)>,
}

impl Load {
    /// Person `i` writes; every tenth message asks for a delegation.
    fn dm(&mut self, c: &Cluster) {
        let i = self.sent.len();
        // Twice over: the previous build cuts the turns under way when it
        // is stopped (this one lets them finish: tests/restart.rs), and the
        // next instance runs a cut turn again.
        for _ in 0..2 {
            if i.is_multiple_of(10) {
                c.model.push(
                    Step::tool_call(
                        "delegate",
                        json!({"agent": "reviewer", "prompt": format!("review {i:04}.")}),
                    )
                    .when_last_contains(&format!("question {i:04}.")),
                );
                c.reviewer
                    .push(Step::text(format!("reviewed {i:04}.")).when_last_contains(&format!("review {i:04}.")));
                c.model
                    .push(Step::text(format!("answer {i:04}.")).when_last_contains(&format!("reviewed {i:04}.")));
            } else {
                c.model
                    .push(Step::text(format!("answer {i:04}.")).when_last_contains(&format!("question {i:04}.")));
            }
        }
        let id = 5000 + i as i64;
        c.tg.message(
            private_chat(id, "P"),
            user(id, "P"),
            &format!("question {i:04}."),
            None,
            None,
        );
        self.sent.push(Instant::now());
    }

    /// Note the answers sent since the last look.
    fn look(&mut self, c: &Cluster) {
        let mut count: BTreeMap<usize, usize> = BTreeMap::new();
        for t in texts(&c.tg) {
            if let Some(n) = t.strip_prefix("answer ").and_then(|r| r.strip_suffix('.')) {
                *count.entry(n.parse().unwrap()).or_default() += 1;
            }
        }
        let now = Instant::now();
        for (i, n) in count {
            self.answered.entry(i).or_insert((now, n)).1 = n;
        }
    }

    /// Keep writing at `RATE` while `work` runs; its output.
    async fn during<T>(&mut self, c: &Cluster, work: impl std::future::Future<Output = T>) -> T {
        let mut work = std::pin::pin!(work);
        let mut tick = tokio::time::interval(Duration::from_millis(1000 / RATE));
        loop {
            tokio::select! {
                out = &mut work => return out,
                _ = tick.tick() => {
                    self.dm(c);
                    self.look(c);
                }
            }
        }
    }

    /// Seconds from writing to the answer of messages `range`: p50, p99,
    /// max, and how many waited more than 2 s.
    fn waits(&self, range: std::ops::Range<usize>) -> (f64, f64, f64, usize) {
        let mut w: Vec<f64> = range
            .filter_map(|i| Some((self.answered.get(&i)?.0 - self.sent[i]).as_secs_f64()))
            .collect();
        w.sort_by(f64::total_cmp);
        let at = |p: f64| w[((w.len() as f64 * p).ceil() as usize).clamp(1, w.len()) - 1];
        (at(0.5), at(0.99), at(1.0), w.iter().filter(|s| **s > 2.0).count())
    }
}

/// What was sent to people `who`, and what every process of every node
/// warned about (a failing run shows why).
fn explain<'a>(c: &Cluster, who: impl Iterator<Item = &'a usize>) {
    for i in who {
        let to: Vec<_> =
            c.tg.sent()
                .into_iter()
                .filter(|m| m["chat"]["id"] == 5000 + *i as i64)
                .collect();
        println!("sent to {i}: {to:?}");
    }
    for (n, node) in c.nodes.iter().enumerate() {
        for log in std::fs::read_dir(node.sandbox.path()).unwrap().flatten() {
            let name = log.file_name().to_string_lossy().into_owned();
            if !name.starts_with("gateway-") {
                continue;
            }
            let text = std::fs::read_to_string(log.path()).unwrap_or_default();
            for line in text
                .lines()
                .filter(|l| !l.contains(" INFO ") || l.contains("stop") || l.contains("again"))
            {
                println!("node {n} {name}: {line}");
            }
        }
    }
}

/// Replace node `i` (stopped with SIGTERM) by this build, in its folder.
async fn upgrade(c: &Cluster, i: usize, new: &std::path::Path) -> support::Gateway {
    c.nodes[i].gw.terminate().await;
    support::Gateway::start_from(new, &c.nodes[i].sandbox, support::free_port(), "team", &[]).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rolling_upgrade_under_load_loses_and_doubles_nothing() {
    let Ok(old) = std::env::var("SWITCHBOARD_TEST_OLD_SWITCHBOARD") else {
        eprintln!(
            "SWITCHBOARD_TEST_OLD_SWITCHBOARD not set (scripts/test.sh builds it); the upgrade test did not run here"
        );
        return;
    };
    let Some(pg) = support::fresh_database("mixed") else {
        eprintln!("SWITCHBOARD_TEST_POSTGRES_URL not set; the upgrade test did not run here");
        return;
    };
    let (old, new) = (PathBuf::from(old), support::binary());
    let mut c = cluster_of(&pg, [&old, &old, &old], [&[], &[], &[]], |cfg| cfg).await;
    let a = owner(&c, None, 20).await;
    let others: Vec<usize> = (0..3).filter(|i| *i != a).collect();
    let mut load = Load::default();

    // The old build alone.
    load.during(&c, tokio::time::sleep(Duration::from_secs(5))).await;
    let upgrade_from = load.sent.len();
    let began = Instant::now();
    // One other instance first: old and new side by side. An approval
    // the old owner prompts is decided from the new instance.
    let gw = load.during(&c, upgrade(&c, others[0], &new)).await;
    c.nodes[others[0]].gw = gw;
    let id = load.during(&c, ask_for_an_approval(&c, a)).await;
    load.during(&c, decide_once(&c, others[0], &id)).await;
    load.during(&c, c.tg.wait_sent_to(11, 1, 20)).await;
    load.during(&c, tokio::time::sleep(Duration::from_secs(2))).await;
    let status = c.nodes[a].sandbox.run(&["status", "--config", "switchboard.toml"]).1;
    assert!(status.contains("mixed builds"), "{status}");
    let gw = load.during(&c, upgrade(&c, others[1], &new)).await;
    c.nodes[others[1]].gw = gw;
    load.during(&c, tokio::time::sleep(Duration::from_secs(2))).await;
    // The channel's owner last: the channel moves to a new instance.
    let gw = load.during(&c, upgrade(&c, a, &new)).await;
    c.nodes[a].gw = gw;
    let upgraded_by = load.sent.len();
    let took = began.elapsed();
    load.during(&c, tokio::time::sleep(Duration::from_secs(5))).await;

    // Every message answered, once.
    let deadline = Instant::now() + Duration::from_secs(90);
    while load.answered.len() < load.sent.len() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
        load.look(&c);
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    load.look(&c);
    let missing: Vec<usize> = (0..load.sent.len())
        .filter(|i| !load.answered.contains_key(i))
        .collect();
    let twice: Vec<usize> = load
        .answered
        .iter()
        .filter(|(_, (_, n))| *n > 1)
        .map(|(i, _)| *i)
        .collect();
    if !missing.is_empty() || !twice.is_empty() {
        explain(&c, missing.iter().chain(&twice));
    }
    assert!(missing.is_empty(), "unanswered: {missing:?}");
    assert!(twice.is_empty(), "answered twice: {twice:?}");
    assert_eq!(
        texts(&c.tg).iter().filter(|t| *t == "Stored.").count(),
        1,
        "the approved call ran once"
    );
    no_instance_taken_for_dead(&c);
    let status = c.nodes[a].sandbox.run(&["status", "--config", "switchboard.toml"]).1;
    assert!(!status.contains("mixed builds"), "{status}");

    let before = load.waits(0..upgrade_from);
    let during = load.waits(upgrade_from..upgraded_by);
    let after = load.waits(upgraded_by..load.sent.len());
    let mut asked: BTreeMap<String, usize> = BTreeMap::new();
    for r in c.model.requests() {
        *asked
            .entry(switchboard_test_support::last_message_text(&r))
            .or_default() += 1;
    }
    let rerun = asked
        .iter()
        .filter(|(q, n)| q.starts_with("question ") && **n > 1)
        .count();
    println!(
        "{} DMs at {RATE}/s, 1 in 10 delegating; upgrade of 3 instances took {:.1} s; turns cut by a stopping old build and run again: {rerun}",
        load.sent.len(),
        took.as_secs_f64()
    );
    for (what, (p50, p99, max, late)) in [("before", before), ("during", during), ("after", after)] {
        println!("  {what:>6} the upgrade: p50 {p50:.2} s, p99 {p99:.2} s, max {max:.2} s, {late} waited over 2 s");
    }
}
