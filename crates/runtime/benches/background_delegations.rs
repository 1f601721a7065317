//! N background delegations fanned out in one turn to a scripted model with
//! fixed latency: wall time until every task row is `completed`, compared
//! with that latency; peak RSS; control-plane writes per second.
//!
//! The scripted models run on threads of their own (or, with
//! `BENCH_WORKER_URL`, the workers' model in another process).
//! Three rounds run one after the other in one process, as bursts reach a
//! running gateway: the first starts cold (no open connection to the model
//! server, so every child opens one); later rounds reuse the connections
//! the provider's pool kept and open only the ones it lacks (printed).
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
use switchboard_store::{RunKind, RunStatus, Store};
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

/// Files in every `delegate_results` folder under `root`.
fn count_artifacts(root: &std::path::Path) -> usize {
    let Ok(entries) = std::fs::read_dir(root) else { return 0 };
    entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| {
            if e.file_name() == "delegate_results" {
                std::fs::read_dir(e.path()).map(std::iter::Iterator::count).unwrap_or(0)
            } else {
                count_artifacts(&e.path())
            }
        })
        .sum()
}

struct Bench {
    runtime: Runtime,
    store: Store,
    main_model: ScriptedModel,
    worker_model: ScriptedModel,
    /// Workers answered by a scripted model in another process.
    external: bool,
    dir: tempfile::TempDir,
    n: usize,
    latency: Duration,
}

impl Bench {
    async fn round(&self, name: &str, round: usize) {
        let n = self.n;
        let calls: Vec<(String, String)> = (0..n)
            .map(|i| {
                let args = json!({"agent": "worker", "prompt": format!("task {round}.{i}"), "background": true});
                ("delegate".to_string(), args.to_string())
            })
            .collect();
        let refs: Vec<(&str, &str)> = calls.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        self.main_model.push(Step::tool_calls(&refs));
        self.main_model.push(Step::text("all started"));
        for _ in 0..n {
            self.worker_model.push(Step::text("done").delay(self.latency));
        }
        let before = (n * round) as i64;
        let arrivals_before = self.worker_model.arrivals().len();
        let connections_before = self.worker_model.connections();
        let writes_before = self.store.writes();
        let start = Instant::now();
        let reply = self
            .runtime
            .run_turn(TurnRequest::new(
                "main",
                &format!("bench-{round}"),
                "fan out",
                Arc::new(NoApprover("bench".into())),
            ))
            .await
            .unwrap();
        let turn_done = start.elapsed();
        assert_eq!(reply.text, "all started");
        let mut half_done = None;
        loop {
            let done = (self
                .store
                .runs()
                .count(RunKind::Delegate, RunStatus::Completed)
                .await
                .unwrap()
                - before) as usize;
            if half_done.is_none() && done * 2 >= n {
                half_done = Some(start.elapsed());
            }
            if done == n {
                break;
            }
            let failed = self
                .store
                .runs()
                .count(RunKind::Delegate, RunStatus::Failed)
                .await
                .unwrap();
            assert_eq!(failed, 0, "some background tasks failed");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let wall = start.elapsed();
        // The result files are written after the rows, by a low-priority thread.
        let artifacts = loop {
            if count_artifacts(self.dir.path()) >= n * (round + 1) {
                break start.elapsed();
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        };
        let writes = self.store.writes() - writes_before;
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        println!("{name}:");
        println!("  turn returned (all tasks started): {:>8.1} ms", ms(turn_done));
        if !self.external {
            let arrivals = &self.worker_model.arrivals()[arrivals_before..];
            let at = |i: usize| ms(arrivals[i].duration_since(start));
            println!(
                "  worker requests arrived:           {:>8.1} ms first, {:.1} median, {:.1} last",
                at(0),
                at(arrivals.len() / 2),
                at(arrivals.len() - 1)
            );
            println!(
                "  new connections to the model:      {:>8}",
                self.worker_model.connections() - connections_before
            );
        }
        println!(
            "  half the tasks completed:          {:>8.1} ms",
            ms(half_done.unwrap_or(wall))
        );
        println!("  all tasks completed:               {:>8.1} ms", ms(wall));
        println!(
            "  wall / latency:                    {:>8.2}x (target < 2x)",
            wall.as_secs_f64() / self.latency.as_secs_f64()
        );
        println!("  all result files written:          {:>8.1} ms", ms(artifacts));
        println!(
            "  store writes:                      {writes:>8} ({:.0}/s)",
            writes as f64 / wall.as_secs_f64()
        );
        println!("  peak RSS so far:                   {:>8.1} MiB", peak_rss_mib());
    }
}

fn main() {
    // As the `switchboard` binary does.
    switchboard_runtime::process::disable_transparent_huge_pages();
    // The scripted models get a runtime (threads) of their own, as a model
    // server in another process would have: otherwise the fake server's
    // work would queue on the gateway's own worker threads.
    let models = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("model-server")
        .enable_all()
        .build()
        .unwrap();
    let main_model = models.block_on(ScriptedModel::start());
    let worker_model = models.block_on(ScriptedModel::start());
    let gateway = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    gateway.block_on(run(main_model, worker_model));
    drop(gateway);
    drop(models);
}

async fn run(main_model: ScriptedModel, worker_model: ScriptedModel) {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let n: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let latency = Duration::from_millis(args.get(1).and_then(|a| a.parse().ok()).unwrap_or(200));

    // BENCH_WORKER_URL points the workers at a scripted model in another
    // process (`scripted-model --replies 3N --delay-ms L`), so the gateway
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
    main_model.without_recording();
    worker_model.without_recording();
    let bench = Bench {
        runtime,
        store,
        main_model,
        worker_model,
        external: external.is_some(),
        dir,
        n,
        latency,
    };
    println!("background delegations: n={n} model latency={} ms", latency.as_millis());
    bench
        .round("round 1 (cold: no connection to the model is open)", 0)
        .await;
    bench.round("round 2 (the pool holds round 1's connections)", 1).await;
    bench.round("round 3", 2).await;
    if external.is_none() {
        println!("worker model max in flight: {}", bench.worker_model.max_in_flight());
    }
}
