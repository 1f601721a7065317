//! The database going away under a running cluster (docs/operations.md,
//! "The database going away"): three `switchboard run` processes reach
//! PostgreSQL through a relay the test cuts for three leases and restores,
//! while a DM arrives and an approval waits. Nothing restarts; no live
//! instance is taken for dead when the database comes back (the outage
//! silenced everyone at once), so the waiting approval is still decided
//! once, and the DM written during the outage is answered once after it
//! (its writer told meanwhile that it waits).

mod cluster_fx;
mod support;

use cluster_fx::*;
use std::time::{Duration, Instant};
use switchboard_test_support::Step;
use switchboard_test_support::relay::Relay;
use switchboard_test_support::telegram::{private_chat, user};

/// `config` with its database reached through `relay` instead.
fn through(config: String, relay: &str) -> String {
    let (head, rest) = config.split_once("database_url = \"").unwrap();
    let (url, tail) = rest.split_once('"').unwrap();
    let (scheme_user, host_db) = url.split_once('@').unwrap();
    let (_, db) = host_db.split_once('/').unwrap();
    format!("{head}database_url = \"{scheme_user}@{relay}/{db}\"{tail}")
}

/// Wait until the scrape at `url` says `switchboard_database_up {up}`.
async fn database_up(url: &str, up: u8) {
    let deadline = Instant::now() + Duration::from_secs(20);
    let want = format!("switchboard_database_up {up}");
    loop {
        let body = match reqwest::get(url).await {
            Ok(r) => r.text().await.unwrap_or_default(),
            Err(_) => String::new(),
        };
        if body.lines().any(|l| l == want) {
            return;
        }
        assert!(Instant::now() < deadline, "{url} never said {want}:\n{body}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outage_of_the_database_reclaims_no_live_instance_and_loses_nothing() {
    let Ok(admin) = std::env::var("SWITCHBOARD_TEST_POSTGRES_URL") else {
        eprintln!("SWITCHBOARD_TEST_POSTGRES_URL not set; the outage test did not run here");
        return;
    };
    let server = admin.split_once('@').unwrap().1.split_once('/').unwrap().0.to_string();
    let relay = Relay::start(&server).await;
    let addr = relay.addr();
    // Each instance serves /metrics on a port of its own, in start order.
    let metrics = std::sync::Mutex::new(Vec::new());
    let tweak = |cfg: String| {
        let port = support::free_port();
        metrics.lock().unwrap().push(port);
        format!(
            "{}[telemetry]\nmetrics_listen = \"127.0.0.1:{port}\"\n",
            through(cfg, &addr)
        )
    };
    let Some(c) = cluster_tweaked("outage", [&[], &[], &[]], tweak).await else {
        return;
    };
    let a = owner(&c, None, 20).await;
    let scrape = format!("http://127.0.0.1:{}/metrics", metrics.lock().unwrap()[a]);
    database_up(&scrape, 1).await;

    // An approval waits on the owner when the database goes away.
    let id = ask_for_an_approval(&c, a).await;

    let outage = Duration::from_secs(3 * LEASE + 1);
    relay.cut();
    let cut_at = Instant::now();
    c.model
        .push(Step::text("Answered after the outage.").when_last_contains("during the outage"));
    c.tg.message(
        private_chat(12, "Bob"),
        user(12, "Bob"),
        "during the outage",
        None,
        None,
    );
    let body = readiness(&c.nodes[a], 503, 10).await;
    assert!(
        body.contains("\"database\"") && !body.contains("\"database\":\"ok\""),
        "{body}"
    );
    // The counters are still served; the gauge says the database is away.
    database_up(&scrape, 0).await;
    tokio::time::sleep(outage.saturating_sub(cut_at.elapsed())).await;
    relay.restore();
    println!("the database was away for {:.1} s", cut_at.elapsed().as_secs_f64());
    readiness(&c.nodes[a], 200, 30).await;
    database_up(&scrape, 1).await;

    let back = Instant::now();
    // Bob was told at once that his message waits; then it is answered.
    let to_bob = c.tg.wait_sent_to(12, 2, 60).await;
    assert_eq!(
        to_bob[0]["text"].as_str().unwrap_or(""),
        WAITS,
        "told while the database was away"
    );
    assert_eq!(to_bob[1]["text"], "Answered after the outage.");
    println!(
        "the DM written during the outage was answered {:.1} s after the database came back",
        back.elapsed().as_secs_f64()
    );
    // Two leases of sweeps by every instance after the return.
    tokio::time::sleep(Duration::from_secs(2 * LEASE)).await;
    decide_once(&c, a, &id).await;
    c.tg.wait_sent(3, 20).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let mut sent = texts(&c.tg);
    sent.sort();
    assert_eq!(sent, ["Answered after the outage.", WAITS, "Stored."], "each once");
    no_instance_taken_for_dead(&c);
}
