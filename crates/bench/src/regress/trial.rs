//! One trial of one target: a process (a `switchboard run` of some build,
//! or the raw relay) against a fresh loopback Bot API and an instant
//! model in this process, measured from outside as a person and an
//! operator would see it.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use switchboard_test_support::ScriptedModel;
use switchboard_test_support::telegram::{FakeTelegram, private_chat, user};

/// What a trial measures.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sizes {
    /// Sequential direct messages (one person at a time).
    pub sequential: usize,
    /// People writing at the same moment, first burst.
    pub burst: usize,
    /// People writing at the same moment, second (bigger) burst.
    pub big_burst: usize,
    /// Seconds of idleness measured after start-up.
    pub idle_secs: u64,
}

/// A trial's numbers, in the order of [`MEASURES`].
pub(crate) type Measures = [f64; 15];

/// Each measure's name and unit, in the order of [`Measures`].
pub(crate) const MEASURES: [(&str, &str); 15] = [
    ("start -> first getUpdates", "ms"),
    ("idle RSS", "MiB"),
    ("idle CPU", "% of a core"),
    ("sequential DMs p50", "ms"),
    ("sequential DMs p90", "ms"),
    ("first burst, all answered", "ms"),
    ("second burst, all answered", "ms"),
    ("RSS after the bursts", "MiB"),
    ("CPU per burst message", "µs"),
    ("stand-ins' CPU per message", "µs"),
    ("model connections opened", "count"),
    ("Bot API connections opened", "count"),
    ("lone DM, 1 s model: first text", "ms"),
    ("3 DMs 200 ms apart, 1 s model: model requests", "count"),
    ("3 DMs 200 ms apart, 1 s model: answers", "count"),
];

/// What runs: the label in the table and the command that starts it, with
/// `{config}`, `{api}`, `{model}` and `{dir}` (the trial's scratch folder)
/// replaced in its arguments.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub label: String,
    pub program: PathBuf,
    pub args: Vec<String>,
    /// TOML added to its configuration.
    pub extra: String,
}

/// Kills the process when the trial ends, however it ends.
pub(crate) struct Running(pub(crate) Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

const TOKEN: &str = "123:BENCH";

/// Run `target` once and measure it.
pub(crate) async fn run(target: &Target, sizes: Sizes) -> anyhow::Result<Measures> {
    let tg = FakeTelegram::start().await;
    let model = ScriptedModel::start().await;
    model.without_recording().echo_after(Duration::ZERO);
    let dir = std::env::temp_dir().join(format!("switchboard-regress-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir)?;
    let telegram = format!(
        "[channels.telegram.main]\nbot_token = \"{TOKEN}\"\napi_url = \"{}\"\nallowed_users = [\"*\"]\n{}\n",
        tg.url(),
        target.extra
    );
    let config = crate::common::write_config(&dir, &model.url(), "telegram.main", &telegram)?;
    let args: Vec<String> = target
        .args
        .iter()
        .map(|a| {
            a.replace("{config}", &config.display().to_string())
                .replace("{api}", &tg.url())
                .replace("{model}", &model.url())
                .replace("{dir}", &dir.display().to_string())
        })
        .collect();
    let started = Instant::now();
    let child = Command::new(&target.program)
        .args(&args)
        .env("SWITCHBOARD_LOG", "error")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let process = Running(child);
    let pid = process.0.id();
    while tg.get_updates_calls() == 0 {
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(30),
            "{} never polled",
            target.label
        );
        tokio::time::sleep(Duration::from_micros(200)).await;
    }
    let startup = started.elapsed().as_secs_f64() * 1e3;
    let cpu_before = cpu_ticks(pid)?;
    tokio::time::sleep(Duration::from_secs(sizes.idle_secs)).await;
    let idle_cpu = (cpu_ticks(pid)? - cpu_before) as f64 / TICKS_PER_SEC / sizes.idle_secs.max(1) as f64 * 100.0;
    let idle_rss = rss_mib(pid, "VmRSS:")?;
    let (p50, p90) = sequential(&tg, sizes.sequential).await?;
    let cpu_before = cpu_ticks(pid)?;
    let me = std::process::id();
    let harness_before = cpu_ticks(me)?;
    let first = burst(&tg, 10_000, sizes.burst).await?;
    let second = burst(&tg, 100_000, sizes.big_burst).await?;
    let burst_cpu = (cpu_ticks(pid)? - cpu_before) as f64 / TICKS_PER_SEC;
    let harness_cpu = (cpu_ticks(me)? - harness_before) as f64 / TICKS_PER_SEC;
    let messages = (sizes.burst + sizes.big_burst).max(1) as f64;
    let (per_message, harness_per_message) = (burst_cpu * 1e6 / messages, harness_cpu * 1e6 / messages);
    let after = rss_mib(pid, "VmRSS:")?;
    let connections = (model.connections() as f64, tg.connections() as f64);
    let lone = super::slow_model::lone_dm(&tg, &model).await?;
    let (requests, answers) = super::slow_model::burst_of_three(&tg, &model).await?;
    drop(process);
    std::fs::remove_dir_all(&dir).ok();
    Ok([
        startup,
        idle_rss,
        idle_cpu,
        p50,
        p90,
        first,
        second,
        after,
        per_message,
        harness_per_message,
        connections.0,
        connections.1,
        lone,
        requests,
        answers,
    ])
}

/// Wait until the bot has sent `n` messages in all (at most a minute).
async fn answered(tg: &FakeTelegram, n: usize) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(60);
    while tg.sent_count() < n {
        anyhow::ensure!(
            Instant::now() < deadline,
            "only {} of {n} answers arrived",
            tg.sent_count()
        );
        tokio::time::sleep(Duration::from_micros(500)).await;
    }
    Ok(())
}

/// `n` direct messages one after another; p50 and p90 in ms.
async fn sequential(tg: &FakeTelegram, n: usize) -> anyhow::Result<(f64, f64)> {
    let mut micros = Vec::with_capacity(n);
    for i in 0..n {
        let before = tg.sent_count();
        let t = Instant::now();
        let id = 1000 + i as i64;
        tg.message(
            private_chat(id, "Ann"),
            user(id, "Ann"),
            &format!("message {i}"),
            None,
            None,
        );
        answered(tg, before + 1).await?;
        micros.push(t.elapsed().as_micros() as u64);
    }
    micros.sort_unstable();
    Ok((
        crate::common::percentile(&micros, 0.5),
        crate::common::percentile(&micros, 0.9),
    ))
}

/// `n` people (ids from `first_id`) writing at once; ms until all are answered.
async fn burst(tg: &FakeTelegram, first_id: i64, n: usize) -> anyhow::Result<f64> {
    let before = tg.sent_count();
    let t = Instant::now();
    for u in 0..n {
        let id = first_id + u as i64;
        tg.message(private_chat(id, "P"), user(id, "P"), "all at once", None, None);
    }
    answered(tg, before + n).await?;
    Ok(t.elapsed().as_secs_f64() * 1e3)
}

/// Linux reports CPU time in clock ticks of 1/100 s on every platform it
/// runs this benchmark on (`getconf CLK_TCK`).
const TICKS_PER_SEC: f64 = 100.0;

/// User plus system CPU time of `pid` so far, in clock ticks.
fn cpu_ticks(pid: u32) -> anyhow::Result<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // Fields after the command name (which may hold spaces): state is the
    // first, utime the 12th, stime the 13th.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok()).unwrap_or(0);
    Ok(field(11) + field(12))
}

/// A memory line of `/proc/<pid>/status`, in MiB.
pub(crate) fn rss_mib(pid: u32, field: &str) -> anyhow::Result<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let kib = status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<f64>().ok())
        .ok_or_else(|| anyhow::anyhow!("no {field} for process {pid}"))?;
    Ok(kib / 1024.0)
}
