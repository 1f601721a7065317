//! `approvals`: the approval round trip through the route broker with an
//! instant approver — request stored, prompt posted to a local ops room,
//! the approver's decision recorded, the prompt edited, the outcome
//! returned — as p50/p99 over N sequential requests. `announce`: child
//! completion to announcement delivered, and outbox throughput.

use crate::common::{print_quantiles, tempfile_dir};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;
use switchboard_channel_local::LocalHub;
use switchboard_config::Config;
use switchboard_core::{ApprovalChoice, ChatAddress, UserId};
use switchboard_gateway::embed::{Ballot, ChannelSet, RouteBroker};
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
            risk: switchboard_core::Risk::Low,
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
    println!("approval round trip (instant approver), n={n}");
    print_quantiles(&mut micros);
    println!("  store writes per round trip: {:.1}", store.writes() as f64 / n as f64);
    std::fs::remove_dir_all(&dir).ok();
    Ok(ExitCode::SUCCESS)
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
    let worker = switchboard_gateway::embed::spawn_outbox(
        store.clone(),
        channels,
        switchboard_gateway::embed::Fences::default(),
    );

    let mut seen = 0;
    let mut micros = Vec::with_capacity(n);
    for i in 0..n {
        let t = Instant::now();
        store
            .outbox()
            .enqueue(
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
    println!("announcement latency (queued -> delivered to a local channel), n={n}");
    print_quantiles(&mut micros);

    let t = Instant::now();
    for i in 0..n {
        store
            .outbox()
            .enqueue(
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
