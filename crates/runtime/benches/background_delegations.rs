//! N background delegations fanned out in one turn to a scripted model with
//! fixed latency: wall time until every task row is `completed`, compared
//! with that latency; peak RSS; control-plane writes per second.
//!
//! `cargo bench -p switchboard-runtime --bench background_delegations -- [N] [LATENCY_MS]`
//! (defaults 1000 and 200).

/// The same allocator as the `switchboard` binary.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};
use switchboard_config::Config;
use switchboard_runtime::{NoApprover, Runtime, TurnRequest};
use switchboard_store::Store;
use switchboard_test_support::{ScriptedModel, Step};

fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|kb| kb.parse::<f64>().ok()))
        })
        .map(|kb| kb / 1024.0)
        .unwrap_or(f64::NAN)
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let n: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let latency = Duration::from_millis(args.get(1).and_then(|a| a.parse().ok()).unwrap_or(200));

    let main_model = ScriptedModel::start().await;
    let worker_model = ScriptedModel::start().await;
    // BENCH_WORKER_URL points the workers at a scripted model in another
    // process (`scripted-model --replies N --delay-ms L`), so the gateway
    // does not share its process with the fake server.
    let external = std::env::var("BENCH_WORKER_URL").ok();
    let dir = tempfile::tempdir().unwrap();
    let toml = format!(
        r#"database_url = "sqlite://{d}/cp.db"
workspace_dir = "{d}/ws"
[providers.pmain]
kind = "openai"
base_url = "{m}"
model = "main"
max_retries = 0
[providers.pworker]
kind = "openai"
base_url = "{w}"
model = "worker"
max_retries = 0
[agents.main]
model_provider = "pmain"
[agents.worker]
model_provider = "pworker"
[risk_profiles.default]
level = "full"
delegation_policy = {{ mode = "allow" }}
[runtime_profiles.default]
max_actions_per_hour = 1000000
"#,
        d = dir.path().display(),
        m = main_model.url(),
        w = external.clone().unwrap_or_else(|| worker_model.url())
    );
    let config = Config::from_toml_str(&toml, "bench").unwrap();
    let store = Store::open(&config.database_url).await.unwrap();
    let runtime = Runtime::new(Arc::new(config), store.clone()).unwrap();

    let calls: Vec<(String, String)> = (0..n)
        .map(|i| {
            let args = json!({"agent": "worker", "prompt": format!("task {i}"), "background": true});
            ("delegate".to_string(), args.to_string())
        })
        .collect();
    let refs: Vec<(&str, &str)> = calls.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    main_model.push(Step::tool_calls(&refs));
    main_model.push(Step::text("all started"));
    for _ in 0..n {
        worker_model.push(Step::text("done").delay(latency));
    }
    main_model.without_recording();
    worker_model.without_recording();

    let writes_before = store.writes();
    let start = Instant::now();
    if std::env::var("BENCH_DEBUG").is_ok() {
        let (store, wm) = (store.clone(), worker_model.url());
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_secs(1)).await;
                let running = store.count_runs("delegate", "running").await.unwrap_or(-1);
                let done = store.count_runs("delegate", "completed").await.unwrap_or(-1);
                eprintln!(
                    "{:?} running={running} completed={done} writes={} {wm}",
                    start.elapsed(),
                    store.writes()
                );
            }
        });
    }
    let reply = runtime
        .run_turn(TurnRequest {
            agent: "main".into(),
            session_key: "bench".into(),
            origin: None,
            sender: None,
            text: "fan out".into(),
            broker: Arc::new(NoApprover("bench".into())),
            cancel: Default::default(),
            events: None,
        })
        .await
        .unwrap();
    let turn_done = start.elapsed();
    assert_eq!(reply.text, "all started");
    let mut half_done = None;
    loop {
        let done = store.count_runs("delegate", "completed").await.unwrap();
        if half_done.is_none() && done as usize * 2 >= n {
            half_done = Some(start.elapsed());
        }
        if done as usize == n {
            break;
        }
        let failed = store.count_runs("delegate", "failed").await.unwrap();
        assert_eq!(failed, 0, "some background tasks failed");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let wall = start.elapsed();
    let writes = store.writes() - writes_before;
    println!("background delegations: n={n} model latency={} ms", latency.as_millis());
    println!(
        "  turn returned (all tasks started): {:>8.1} ms",
        turn_done.as_secs_f64() * 1e3
    );
    if external.is_none() {
        let arrivals = worker_model.arrivals();
        let at = |i: usize| arrivals[i].duration_since(start).as_secs_f64() * 1e3;
        println!(
            "  worker requests arrived (first / median / last): {:.1} / {:.1} / {:.1} ms",
            at(0),
            at(arrivals.len() / 2),
            at(arrivals.len() - 1)
        );
    }
    println!(
        "  half the tasks completed:          {:>8.1} ms",
        half_done.unwrap_or(wall).as_secs_f64() * 1e3
    );
    println!(
        "  all tasks completed:               {:>8.1} ms",
        wall.as_secs_f64() * 1e3
    );
    println!(
        "  wall / latency:                    {:>8.2}x (target < 2x)",
        wall.as_secs_f64() / latency.as_secs_f64()
    );
    println!("  peak RSS:                          {:>8.1} MiB", peak_rss_mib());
    println!(
        "  store writes:                      {writes:>8} ({:.0}/s)",
        writes as f64 / wall.as_secs_f64()
    );
    if external.is_none() {
        println!(
            "  worker model max in flight:        {:>8}",
            worker_model.max_in_flight()
        );
    } else {
        println!("  worker model: in another process");
    }
}
