//! `bench matrix`: the Matrix adapter against a real Synapse on loopback
//! with an instant scripted model. The same traffic also goes to a minimal
//! echo bot written against the raw client-server API, so the difference
//! is what Switchboard (adapter, router, runtime, store) adds per message.

use crate::common::{instant_setup, percentile};
use serde_json::{Value, json};
use std::process::ExitCode;
use std::time::{Duration, Instant};
use switchboard_test_support::synapse::{self, Person, Synapse, WATCH_READY};
use tokio::sync::mpsc::UnboundedReceiver;

const BOT: &str = "@bot:localhost";

/// A bot that answers every message from someone else with "ok", using
/// nothing but `/sync` and `/send`: the floor any Matrix bot pays.
async fn spawn_echo(echo: Person) {
    let mut events = echo.watch();
    ready(&mut events).await;
    tokio::spawn(async move {
        while let Some(ev) = events.recv().await {
            if ev["type"] == "m.room.message" && ev["sender"] != echo.user_id.as_str() {
                let room = ev["room_id"].as_str().unwrap_or_default().to_string();
                let content = json!({"msgtype": "m.text", "body": "ok"});
                if let Err(e) = echo.send_event_retrying(&room, "m.room.message", content, 10).await {
                    eprintln!("echo bot: a reply could not be sent: {e}");
                }
            }
        }
    });
}

async fn ready(events: &mut UnboundedReceiver<Value>) {
    while let Some(ev) = events.recv().await {
        if ev["type"] == WATCH_READY {
            return;
        }
    }
}

/// Wait for `n` messages from `sender`.
async fn replies(events: &mut UnboundedReceiver<Value>, sender: &str, n: usize) -> anyhow::Result<()> {
    let mut seen = 0;
    while seen < n {
        let ev = tokio::time::timeout(Duration::from_secs(60), events.recv())
            .await
            .map_err(|_| anyhow::anyhow!("{sender} did not answer within 60 s ({seen} of {n} seen)"))?
            .ok_or_else(|| anyhow::anyhow!("the watcher stopped"))?;
        if ev["type"] == "m.room.message" && ev["sender"] == sender {
            seen += 1;
        }
    }
    Ok(())
}

struct Measured {
    micros: Vec<u64>,
    burst: Duration,
}

/// Round trips one at a time, then `burst` messages spread over `rooms` at once.
async fn measure(
    person: &Person,
    events: &mut UnboundedReceiver<Value>,
    rooms: &[String],
    peer: &str,
    messages: usize,
    burst: usize,
) -> anyhow::Result<Measured> {
    let mut micros = Vec::with_capacity(messages);
    for i in 0..messages {
        let t = Instant::now();
        person.say(&rooms[0], &format!("message {i}")).await;
        replies(events, peer, 1).await?;
        micros.push(t.elapsed().as_micros() as u64);
    }
    micros.sort_unstable();
    let t = Instant::now();
    let sends = (0..burst).map(|i| person.say(&rooms[i % rooms.len()], "all at once"));
    futures::future::join_all(sends).await;
    replies(events, peer, burst).await?;
    Ok(Measured {
        micros,
        burst: t.elapsed(),
    })
}

fn report(name: &str, m: &Measured, burst: usize) {
    let pct = |p: f64| percentile(&m.micros, p);
    println!(
        "  {name:<11} round trip (n={}): p50 {:>6.2} ms  p90 {:>6.2} ms  p99 {:>6.2} ms   burst of {burst}: {:>6.0} ms = {:>5.0} msg/s",
        m.micros.len(),
        pct(0.5),
        pct(0.9),
        pct(0.99),
        m.burst.as_secs_f64() * 1e3,
        burst as f64 / m.burst.as_secs_f64()
    );
}

pub(crate) async fn matrix(messages: usize, burst: usize, rooms: usize) -> anyhow::Result<ExitCode> {
    synapse::find_python().map_err(|e| anyhow::anyhow!(e))?;
    let rooms = rooms.max(1);
    let hs = Synapse::start().await;
    hs.register("bot", "bench-bot-password").await;
    let (ann, echo) = (
        hs.register("ann", "bench-ann").await,
        hs.register("echo", "bench-echo").await,
    );
    let mut bot_rooms = Vec::new();
    let mut echo_rooms = Vec::new();
    for _ in 0..rooms {
        bot_rooms.push(ann.create_room("", &[BOT], true).await);
        let r = ann.create_room("", &[&echo.user_id], true).await;
        echo.join(&r).await;
        echo_rooms.push(r);
    }
    let joins: Vec<String> = bot_rooms.iter().map(|r| format!("\"{r}\"")).collect();
    let (model, dir, path) = instant_setup(
        messages + burst,
        "matrix.main",
        &format!(
            "[channels.matrix.main]\nhomeserver = \"{}\"\nuser_id = \"{BOT}\"\npassword = \"bench-bot-password\"\nallowed_users = [\"*\"]\nauto_join = [{}]\n",
            hs.url(),
            joins.join(", ")
        ),
    )
    .await?;
    std::fs::write(
        &path,
        std::fs::read_to_string(&path)?.replace(
            "[channels.matrix.main]\n",
            &format!("[channels.matrix.main]\nstore_dir = \"{}/matrix\"\n", dir.display()),
        ),
    )?;
    let started = Instant::now();
    let gw = switchboard_gateway::embed::start(&path).await?;
    let start_ms = started.elapsed().as_secs_f64() * 1e3;
    spawn_echo(echo).await;
    let mut events = ann.watch();
    ready(&mut events).await;

    let echo_result = measure(&ann, &mut events, &echo_rooms, "@echo:localhost", messages, burst).await?;
    let bot_result = measure(&ann, &mut events, &bot_rooms, BOT, messages, burst).await?;
    println!("matrix adapter against Synapse on loopback, instant scripted model (same process)");
    println!("  sign-in, joins and first sync to ready: {start_ms:.0} ms");
    report("echo bot", &echo_result, burst);
    report("switchboard", &bot_result, burst);
    let added = percentile(&bot_result.micros, 0.5) - percentile(&echo_result.micros, 0.5);
    println!("  added by switchboard per message (p50 difference): {added:.2} ms");
    crate::common::finish(gw, &dir, &model, messages + burst).await
}
