//! `switchboard bench`: benchmarks that need the gateway's own parts.
//!
//! `approvals`: the approval round trip through the route broker with an
//! instant approver — request stored, prompt posted to a local ops room,
//! the approver's decision recorded, the prompt edited, the outcome
//! returned — as p50/p99 over N sequential requests.

use crate::approvals::{Ballot, RouteBroker};
use crate::channels::ChannelSet;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;
use switchboard_channel_local::LocalHub;
use switchboard_config::Config;
use switchboard_core::{ApprovalChoice, ChatAddress, UserId};
use switchboard_runtime::{ApprovalBroker, ApprovalOutcome, ApprovalRequest};
use switchboard_store::Store;

pub(crate) async fn approvals(n: usize) -> anyhow::Result<ExitCode> {
    let dir = tempfile_dir()?;
    let route = switchboard_test_support::config::ops_route("cli:alice");
    let toml = format!(
        r#"database_url = "sqlite://{d}/cp.db"
workspace_dir = "{d}/ws"
[providers.p]
kind = "openai"
model = "m"
[agents.main]
model_provider = "p"
{route}[channels.local.ops]
allowed_users = ["cli:alice"]
"#,
        d = dir.display()
    );
    let config = Arc::new(Config::from_toml_str(&toml, "bench").map_err(|e| anyhow::anyhow!("{e}"))?);
    let store = Store::open(&config.database_url).await?;
    let hub = LocalHub::new(&["ops".to_string()]);
    let ops = hub.channel("ops").expect("configured").clone();
    let mut channels = ChannelSet::default();
    channels.insert(ops.clone());
    let broker = Arc::new(RouteBroker::new(config.clone(), store.clone(), channels));

    // The instant approver: allows every prompt the moment it appears.
    let approver = {
        let (broker, ops) = (broker.clone(), ops.clone());
        tokio::spawn(async move {
            let (mut seen, alice, room) = (0, UserId("cli:alice".into()), ChatAddress::new("local.ops", "ops-room"));
            loop {
                for e in ops.wait_events_after(seen).await {
                    seen = e.seq;
                    if let (true, Some(id)) = (e.kind == "approval_prompt", &e.approval_id) {
                        broker
                            .decide(id, Ballot::new(&alice, &room, ApprovalChoice::AllowOnce))
                            .await;
                    }
                }
            }
        })
    };
    let route = config.risk_profiles["default"].approval_route.clone();
    let mut micros = Vec::with_capacity(n);
    for i in 0..n {
        let request = ApprovalRequest {
            id: format!("b{i}"),
            agent: "main".into(),
            caller_chain: Vec::new(),
            tool: "shell".into(),
            summary: "{\"command\":\"ls\"}".into(),
            risk: "low".into(),
            profile_name: "default".into(),
            route: route.clone(),
            origin: None,
            run_id: None,
            requested_by: None,
            originator_may_decide: false,
            timeout_secs: 30,
        };
        let t = Instant::now();
        let outcome = broker.request(request).await;
        micros.push(t.elapsed().as_micros() as u64);
        anyhow::ensure!(
            matches!(outcome, ApprovalOutcome::Approved { .. }),
            "request {i} was not approved: {outcome:?}"
        );
    }
    approver.abort();
    micros.sort_unstable();
    let pct = |p: f64| percentile(&micros, p);
    println!("approval round trip (instant approver), n={n}");
    println!(
        "  p50 {:>7.2} ms   p90 {:>7.2} ms   p99 {:>7.2} ms   max {:>7.2} ms",
        pct(0.5),
        pct(0.9),
        pct(0.99),
        pct(1.0)
    );
    println!("  store writes per round trip: {:.1}", store.writes() as f64 / n as f64);
    std::fs::remove_dir_all(&dir).ok();
    Ok(ExitCode::SUCCESS)
}

/// The `p` quantile of sorted microsecond samples, in milliseconds.
pub(crate) fn percentile(sorted_micros: &[u64], p: f64) -> f64 {
    let i = ((sorted_micros.len() as f64 * p) as usize).min(sorted_micros.len() - 1);
    sorted_micros[i] as f64 / 1000.0
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
    let config = format!(
        r#"database_url = "sqlite://{d}/cp.db"
workspace_dir = "{d}/ws"
[providers.p]
kind = "openai"
base_url = "{url}"
model = "instant"
max_retries = 0
[agents.main]
model_provider = "p"
channels = ["{channel}"]
[risk_profiles.default]
level = "full"
# Benchmarks measure throughput: no per-person rate, a deep queue.
[limits]
messages_per_minute = 0
session_queue = 1000
{extra}"#,
        d = dir.display(),
        url = model.url()
    );
    let path = dir.join("switchboard.toml");
    std::fs::write(&path, config)?;
    Ok((model, dir, path))
}

/// The last lines of an adapter benchmark: model requests per message
/// (1.00 when nothing was asked twice); then stop the gateway and remove
/// its folder.
pub(crate) async fn finish(
    gw: crate::run::Gateway,
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

fn tempfile_dir() -> anyhow::Result<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!("switchboard-bench-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// `announce`: from a child's completion (its announcement queued in the
/// outbox) to the channel accepting it, p50/p99 over N sequential
/// children; then outbox throughput with N queued at once.
pub(crate) async fn announcements(n: usize) -> anyhow::Result<ExitCode> {
    let dir = tempfile_dir()?;
    let store = Store::open(&format!("sqlite://{}/cp.db", dir.display())).await?;
    let hub = LocalHub::new(&["team".to_string()]);
    let team = hub.channel("team").expect("configured").clone();
    let mut channels = ChannelSet::default();
    channels.insert(team.clone());
    let worker = crate::outbox::spawn(store.clone(), channels, crate::cluster::Fences::default());

    let mut seen = 0;
    let mut micros = Vec::with_capacity(n);
    for i in 0..n {
        let t = Instant::now();
        store
            .enqueue_announcement(
                &format!("lat-{i}"),
                "local.team",
                "general",
                None,
                &format!("Status: success\nResult: {i}"),
            )
            .await?;
        let events = team.wait_events_after(seen).await;
        seen = events.last().map(|e| e.seq).unwrap_or(seen);
        micros.push(t.elapsed().as_micros() as u64);
    }
    micros.sort_unstable();
    let pct = |p: f64| percentile(&micros, p);
    println!("announcement latency (queued -> delivered to a local channel), n={n}");
    println!(
        "  p50 {:>7.2} ms   p90 {:>7.2} ms   p99 {:>7.2} ms   max {:>7.2} ms",
        pct(0.5),
        pct(0.9),
        pct(0.99),
        pct(1.0)
    );

    let t = Instant::now();
    for i in 0..n {
        store
            .enqueue_announcement(
                &format!("tp-{i}"),
                "local.team",
                "general",
                None,
                &format!("Status: success\nResult: {i}"),
            )
            .await?;
    }
    let queued = t.elapsed();
    while team.events_after(seen).len() < n {
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
    let all = t.elapsed();
    println!("outbox throughput, n={n} queued at once");
    println!(
        "  queued in {:>7.1} ms; all delivered after {:>7.1} ms = {:>6.0} announcements/s",
        queued.as_secs_f64() * 1e3,
        all.as_secs_f64() * 1e3,
        n as f64 / all.as_secs_f64()
    );
    worker.abort();
    std::fs::remove_dir_all(&dir).ok();
    Ok(ExitCode::SUCCESS)
}

fn rss_mib(field: &str) -> f64 {
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

/// `gateway`: the whole gateway in this process (router, runtime, store,
/// a local channel) against an instant scripted model over loopback HTTP:
/// start-up time, DM round trip p50/p90/p99, N users writing at once, model
/// requests per message, RSS. The scripted model server runs in the same
/// process, so RSS and CPU include it.
pub(crate) async fn gateway(messages: usize, users: usize) -> anyhow::Result<ExitCode> {
    use switchboard_core::{Inbound, UserId};

    let (model, dir, path) = instant_setup(
        messages + users,
        "local.bench",
        "[web]\nlisten = \"127.0.0.1:0\"\n[channels.local.bench]\nallowed_users = [\"*\"]\n",
    )
    .await?;
    let t = Instant::now();
    let gw = crate::run::start(&path).await?;
    let startup = t.elapsed();
    let idle_rss = rss_mib("VmRSS:");
    let ch = gw.hub.channel("bench").expect("configured").clone();
    let message = |chat: String, text: String| Inbound {
        address: ChatAddress::new("local.bench", chat),
        sender: UserId("cli:bench".into()),
        sender_name: "bench".into(),
        text,
        message_id: None,
        event_id: None,
        mentioned: true,
        direct: true,
        reply_to: None,
        attachments: Vec::new(),
        action: switchboard_core::Action::Text,
    };

    let mut seen = 0;
    let mut micros = Vec::with_capacity(messages);
    for i in 0..messages {
        let t = Instant::now();
        ch.receive(message(format!("dm-{}", i % 50), format!("message {i}")))
            .await?;
        let events = ch.wait_events_after(seen).await;
        seen = events.last().map(|e| e.seq).unwrap_or(seen);
        micros.push(t.elapsed().as_micros() as u64);
    }
    micros.sort_unstable();
    let pct = |p: f64| percentile(&micros, p);

    let t = Instant::now();
    for u in 0..users {
        ch.receive(message(format!("user-{u}"), "all at once".into())).await?;
    }
    while ch.events_after(seen).len() < users {
        tokio::time::sleep(std::time::Duration::from_micros(200)).await;
    }
    let burst = t.elapsed();
    println!("gateway with an instant scripted model (same process), local channel");
    println!("  start to ready:            {:>8.1} ms", startup.as_secs_f64() * 1e3);
    println!("  RSS after start:           {idle_rss:>8.1} MiB");
    println!(
        "  one DM answered (n={messages}):   p50 {:.2} ms   p90 {:.2} ms   p99 {:.2} ms",
        pct(0.5),
        pct(0.9),
        pct(0.99)
    );
    println!(
        "  {users} users at the same moment: all answered in {:.1} ms",
        burst.as_secs_f64() * 1e3
    );
    println!(
        "  model requests per message: {:.2}",
        model.served() as f64 / (messages + users) as f64
    );
    println!(
        "  RSS after {} messages:    {:>8.1} MiB (peak {:.1} MiB)",
        messages + users,
        rss_mib("VmRSS:"),
        rss_mib("VmHWM:")
    );
    gw.stop().await;
    std::fs::remove_dir_all(&dir).ok();
    Ok(ExitCode::SUCCESS)
}

/// Idle-then-message rounds of `bench telegram`.
const IDLE_ROUNDS: usize = 3;

/// `telegram`: the Telegram adapter against a loopback Bot API server and an
/// instant scripted model, all in this process: round trip per DM (update
/// injected → reply sent) p50/p90/p99, and updates per second with N
/// people writing at once.
pub(crate) async fn telegram(messages: usize, burst: usize, idle_secs: u64) -> anyhow::Result<ExitCode> {
    use switchboard_test_support::telegram::{FakeTelegram, private_chat, user};

    let tg = FakeTelegram::start().await;
    let (model, dir, path) = instant_setup(
        messages + burst + IDLE_ROUNDS,
        "telegram.main",
        &format!(
            "[channels.telegram.main]\nbot_token = \"123:BENCH\"\napi_url = \"{}\"\nallowed_users = [\"*\"]\n",
            tg.url()
        ),
    )
    .await?;
    let gw = crate::run::start(&path).await?;
    let wait_for = |n: usize| {
        let tg = &tg;
        async move {
            while tg.sent().len() < n {
                tokio::time::sleep(std::time::Duration::from_micros(200)).await;
            }
        }
    };
    let writes_before = gw.runtime.store().writes();
    let mut micros = Vec::with_capacity(messages);
    for i in 0..messages {
        let t = Instant::now();
        let id = 1000 + (i % 50) as i64;
        tg.message(
            private_chat(id, "Ann"),
            user(id, "Ann"),
            &format!("message {i}"),
            None,
            None,
        );
        wait_for(i + 1).await;
        micros.push(t.elapsed().as_micros() as u64);
    }
    // Settle the last reply's delivered mark before counting.
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    let writes = (gw.runtime.store().writes() - writes_before) as f64 / messages.max(1) as f64;
    micros.sort_unstable();
    let pct = |p: f64| percentile(&micros, p);
    let t = Instant::now();
    for u in 0..burst {
        let id = 5000 + u as i64;
        tg.message(private_chat(id, "P"), user(id, "P"), "all at once", None, None);
    }
    wait_for(messages + burst).await;
    let all = t.elapsed();
    println!("telegram adapter, loopback Bot API + instant scripted model (same process)");
    println!(
        "  one DM, update to reply (n={messages}): p50 {:.2} ms   p90 {:.2} ms   p99 {:.2} ms",
        pct(0.5),
        pct(0.9),
        pct(0.99)
    );
    println!("  store writes per DM: {writes:.1}");
    println!(
        "  {burst} people at once: all answered in {:.1} ms = {:.0} updates/s",
        all.as_secs_f64() * 1e3,
        burst as f64 / all.as_secs_f64()
    );
    // A quiet bot: the loopback server holds each 25 s poll as Telegram
    // does; the next message must not wait for a poll to be retried.
    let mut sent = messages + burst;
    let rounds = if idle_secs == 0 { 0 } else { IDLE_ROUNDS };
    for round in 0..rounds {
        tokio::time::sleep(std::time::Duration::from_secs(idle_secs)).await;
        let t = Instant::now();
        let id = 9000 + round as i64;
        tg.message(private_chat(id, "Q"), user(id, "Q"), "after a quiet while", None, None);
        sent += 1;
        wait_for(sent).await;
        println!(
            "  first message after {idle_secs} s idle (round {}): {:.2} ms",
            round + 1,
            t.elapsed().as_secs_f64() * 1e3
        );
    }
    finish(gw, &dir, &model, messages + burst + rounds).await
}
