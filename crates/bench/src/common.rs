//! What the benchmarks share: quantiles, a gateway on an instant model,
//! the closing lines of an adapter benchmark, scratch folders, RSS.

use std::process::ExitCode;

/// The `p` quantile of sorted microsecond samples, in milliseconds.
pub(crate) fn percentile(sorted_micros: &[u64], p: f64) -> f64 {
    let i = ((sorted_micros.len() as f64 * p) as usize).min(sorted_micros.len() - 1);
    sorted_micros[i] as f64 / 1000.0
}

/// Sort the microsecond samples and print p50, p90, p99 and max in
/// milliseconds on one line.
pub(crate) fn print_quantiles(micros: &mut [u64]) {
    micros.sort_unstable();
    let pct = |p: f64| percentile(micros, p);
    println!(
        "  p50 {:>7.2} ms   p90 {:>7.2} ms   p99 {:>7.2} ms   max {:>7.2} ms",
        pct(0.5),
        pct(0.9),
        pct(0.99),
        pct(1.0)
    );
}

/// A scripted model answering `replies` requests at once, and a config in
/// a new folder whose agent `main` uses it and answers on `channel`; `extra`
/// adds the channel's own tables. Returns the model, the folder and the config path.
pub(crate) async fn instant_setup(
    replies: usize,
    channel: &str,
    extra: &str,
) -> anyhow::Result<(
    switchboard_test_support::ScriptedModel,
    std::path::PathBuf,
    std::path::PathBuf,
)> {
    use switchboard_test_support::{ScriptedModel, Step};
    let model = ScriptedModel::start().await;
    model.without_recording();
    for _ in 0..replies {
        model.push(Step::text("ok"));
    }
    let dir = tempfile_dir()?;
    println!("{CHANGED_DEFAULTS}");
    let path = write_config(&dir, &model.url(), channel, extra)?;
    Ok((model, dir, path))
}

/// The shipped defaults a bench changes, and why (printed with its numbers;
/// everything else runs as shipped).
pub(crate) const CHANGED_DEFAULTS: &str = "defaults changed: [limits] messages_per_minute = 0 (the bench writes faster than one person may: the per-person rate would refuse it), session_queue = 1000 (a burst may queue that deep in one conversation); everything else as shipped";

/// `switchboard.toml` in `dir`: SQLite there, agent `main` on the model at
/// `model_url` answering on `channel`, no per-person rate and a deep
/// queue (benchmarks measure throughput); `extra` adds the channel's own
/// tables. Returns its path.
pub(crate) fn write_config(
    dir: &std::path::Path,
    model_url: &str,
    channel: &str,
    extra: &str,
) -> anyhow::Result<std::path::PathBuf> {
    let config = format!(
        r#"database_url = "sqlite://{d}/cp.db"
workspace_dir = "{d}/ws"
[providers.p]
kind = "openai"
base_url = "{model_url}"
model = "instant"
max_retries = 0
[agents.main]
model_provider = "p"
channels = ["{channel}"]
[risk_profiles.default]
level = "full"
[limits]
messages_per_minute = 0
session_queue = 1000
{extra}"#,
        d = dir.display(),
    );
    // The local API's socket in the bench's folder, not the working one.
    let socket = format!("[web]\nsocket = \"{}/api.sock\"\n", dir.display());
    let config = if config.contains("[web]\n") {
        config.replacen("[web]\n", &socket, 1)
    } else {
        format!("{config}\n{socket}")
    };
    let path = dir.join("switchboard.toml");
    std::fs::write(&path, config)?;
    Ok(path)
}

/// The last lines of an adapter benchmark: model requests per message
/// (1.00 when nothing was asked twice); then stop the gateway and remove
/// its folder.
pub(crate) async fn finish(
    gw: switchboard_gateway::embed::Gateway,
    dir: &std::path::Path,
    model: &switchboard_test_support::ScriptedModel,
    messages: usize,
) -> anyhow::Result<ExitCode> {
    println!(
        "  model requests per message: {:.2}",
        model.served() as f64 / messages.max(1) as f64
    );
    gw.stop().await;
    std::fs::remove_dir_all(dir).ok();
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn tempfile_dir() -> anyhow::Result<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!("switchboard-bench-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

pub(crate) fn rss_mib(field: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|kb| kb.parse::<f64>().ok()))
        })
        .map(|kb| kb / 1024.0)
        .unwrap_or(f64::NAN)
}
