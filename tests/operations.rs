//! What operators' tools read from a running gateway: a real Prometheus
//! (Debian's package) scrapes `/metrics` and is asked through its own
//! HTTP API; `/readyz` follows the Telegram stand-in going down and
//! coming back while `/healthz` stays up.

mod support;

use serde_json::Value;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use support::{Gateway, Sandbox, free_port, telegram_dm_config};
use switchboard_test_support::telegram::{FakeTelegram, private_chat, user};
use switchboard_test_support::{ScriptedModel, Step};

fn config(model: &str, tg: &str, port: u16, metrics_port: u16) -> String {
    format!(
        "{}[telemetry]\nmetrics_listen = \"127.0.0.1:{metrics_port}\"\n",
        support::with_listen(&telegram_dm_config(model, tg, port), port)
    )
}

async fn setup() -> (ScriptedModel, FakeTelegram, Sandbox, Gateway, u16, u16) {
    let model = ScriptedModel::start().await;
    let tg = FakeTelegram::start().await;
    let (port, metrics_port) = (free_port(), free_port());
    let sandbox = Sandbox::new(&config(&model.url(), &tg.url(), port, metrics_port));
    let gw = Gateway::start(&sandbox, port, "probe").await;
    (model, tg, sandbox, gw, port, metrics_port)
}

/// Debian's `prometheus`, or None (then the test says why it did not run).
fn prometheus_binary() -> Option<String> {
    let path = std::env::var("SWITCHBOARD_TEST_PROMETHEUS").unwrap_or_else(|_| "/usr/bin/prometheus".into());
    if std::path::Path::new(&path).exists() {
        return Some(path);
    }
    assert!(
        std::env::var_os("SWITCHBOARD_TEST_REQUIRE_PROMETHEUS").is_none(),
        "Prometheus is required but {path} is missing (scripts/test.sh installs Debian's prometheus)"
    );
    eprintln!("skipped: no Prometheus at {path} (install Debian's prometheus package)");
    None
}

/// A Prometheus scraping `target` every second; killed on drop.
struct Prometheus {
    child: Child,
    api: String,
    _dir: tempfile::TempDir,
}

impl Prometheus {
    async fn start(binary: &str, target: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: switchboard\n    static_configs:\n      - targets: ['{target}']\n"
            ),
        )
        .unwrap();
        let port = free_port();
        let child = Command::new(binary)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", dir.path().join("data").display()))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("prometheus.log")).unwrap())
            .spawn()
            .expect("start prometheus");
        let p = Self {
            child,
            api: format!("http://127.0.0.1:{port}"),
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while reqwest::get(format!("{}/-/ready", p.api))
            .await
            .map_or(true, |r| !r.status().is_success())
        {
            assert!(Instant::now() < deadline, "prometheus did not become ready");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        p
    }

    /// The result vector of an instant query.
    async fn query(&self, promql: &str) -> Vec<Value> {
        let url = format!("{}/api/v1/query?query={}", self.api, encode(promql));
        let body: Value = reqwest::Client::new()
            .get(url)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(body["status"], "success", "{promql}: {body}");
        body["data"]["result"].as_array().cloned().unwrap_or_default()
    }

    /// The single value of `promql` once it equals `want` (30 s at most).
    async fn wait_value(&self, promql: &str, want: f64) -> f64 {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let got = self
                .query(promql)
                .await
                .first()
                .and_then(|r| r["value"][1].as_str().and_then(|v| v.parse::<f64>().ok()));
            if got == Some(want) {
                return want;
            }
            assert!(Instant::now() < deadline, "{promql}: {got:?}, wanted {want}");
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
}

/// `text` percent-encoded for a query string.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_prometheus_scrapes_messages_and_turn_latency() {
    let Some(binary) = prometheus_binary() else {
        return;
    };
    let (model, tg, _sandbox, gw, _port, metrics_port) = setup().await;
    let prometheus = Prometheus::start(&binary, &format!("127.0.0.1:{metrics_port}")).await;
    prometheus.wait_value("up{job=\"switchboard\"}", 1.0).await;
    for i in 0..10 {
        model.push(Step::text(format!("answer {i}")).usage(40, 6));
    }
    for i in 0..10 {
        let id = 5_000 + i;
        tg.message(
            private_chat(id, "Ann"),
            user(id, "Ann"),
            &format!("question {i}"),
            None,
            None,
        );
    }
    tg.wait_sent(10, 30).await;
    prometheus
        .wait_value("sum(switchboard_messages_taken_total{channel=\"telegram.main\"})", 10.0)
        .await;
    prometheus
        .wait_value(
            "sum(switchboard_messages_answered_total{channel=\"telegram.main\"})",
            10.0,
        )
        .await;
    prometheus
        .wait_value(
            "sum(switchboard_turn_duration_seconds_count{agent=\"main\",outcome=\"ok\"})",
            10.0,
        )
        .await;
    prometheus
        .wait_value(
            "sum(switchboard_model_tokens_total{provider=\"p\",direction=\"input\"})",
            400.0,
        )
        .await;
    // The histogram has its buckets: every turn of an instant model ended
    // within the largest finite one, and a median can be computed.
    let buckets = prometheus
        .query("switchboard_turn_duration_seconds_bucket{agent=\"main\",outcome=\"ok\"}")
        .await;
    assert!(buckets.len() >= 10, "{buckets:?}");
    let median = prometheus
        .query("histogram_quantile(0.5, sum by (le) (switchboard_turn_duration_seconds_bucket))")
        .await;
    let median: f64 = median[0]["value"][1].as_str().unwrap().parse().unwrap();
    assert!(median > 0.0 && median < 120.0, "median turn {median} s");
    prometheus
        .wait_value("switchboard_channel_up{channel=\"telegram.main\"}", 1.0)
        .await;
    prometheus
        .wait_value("switchboard_channel_owned{channel=\"telegram.main\"}", 1.0)
        .await;
    // Every query of the shipped Grafana dashboard is one Prometheus runs.
    let dashboard: Value = serde_json::from_str(include_str!("../deploy/grafana-dashboard.json")).unwrap();
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().unwrap() {
            prometheus.query(target["expr"].as_str().unwrap()).await;
        }
    }
    // Labels carry configured names only: no chat or user id, no text.
    let every = prometheus.query("{__name__=~\"switchboard_.+\"}").await;
    assert!(every.len() > 10, "{every:?}");
    for series in &every {
        let labels = series["metric"].to_string();
        assert!(
            !labels.contains("5000") && !labels.contains("question") && !labels.contains("Ann"),
            "{labels}"
        );
    }
    drop(gw);
}

/// `GET url`: the status and the body as JSON (Null when not JSON).
async fn get(url: &str) -> (u16, Value) {
    let r = reqwest::get(url).await.unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// Poll `url` until it answers `status`; the body.
async fn wait_status(url: &str, status: u16) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (got, body) = get(url).await;
        if got == status {
            return body;
        }
        assert!(Instant::now() < deadline, "{url}: {got} {body}, waited for {status}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_follows_the_platform_and_health_stays_up() {
    let (_model, tg, _sandbox, _gw, port, metrics_port) = setup().await;
    let readyz = format!("http://127.0.0.1:{port}/readyz");
    let body = wait_status(&readyz, 200).await;
    assert_eq!(body["database"], "ok");
    assert_eq!(body["channels"]["telegram.main"], "connected");
    assert_eq!(body["channels"]["local.probe"], "connected");
    // The metrics listener answers the same questions.
    let own = wait_status(&format!("http://127.0.0.1:{metrics_port}/readyz"), 200).await;
    assert_eq!(own["ready"], true);
    tg.set_down(true);
    let body = wait_status(&readyz, 503).await;
    assert_eq!(body["ready"], false);
    assert_ne!(body["channels"]["telegram.main"], "connected", "{body}");
    assert_eq!(body["database"], "ok");
    let healthz = reqwest::get(format!("http://127.0.0.1:{port}/healthz")).await.unwrap();
    assert_eq!(healthz.status().as_u16(), 200);
    assert_eq!(healthz.text().await.unwrap(), "ok\n");
    tg.set_down(false);
    let body = wait_status(&readyz, 200).await;
    assert_eq!(body["channels"]["telegram.main"], "connected");
}

/// A gateway whose only platform channel could not start (the Bot API
/// down at start) is not ready: nobody runs the channel. Once the platform
/// answers, the channel is tried again and the gateway is ready.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_channel_that_failed_to_start_is_not_ready() {
    let model = ScriptedModel::start().await;
    let tg = FakeTelegram::start().await;
    tg.set_down(true);
    let (port, metrics_port) = (free_port(), free_port());
    let sandbox = Sandbox::new(&config(&model.url(), &tg.url(), port, metrics_port));
    let _gw = Gateway::start(&sandbox, port, "probe").await;
    let readyz = format!("http://127.0.0.1:{port}/readyz");
    let body = wait_status(&readyz, 503).await;
    assert_eq!(body["channels"]["telegram.main"], "not running", "{body}");
    assert_eq!(body["database"], "ok");
    tg.set_down(false);
    let body = wait_status(&readyz, 200).await;
    assert_eq!(body["channels"]["telegram.main"], "connected", "{body}");
}
