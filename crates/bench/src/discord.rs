//! `switchboard bench discord`: the Discord adapter against the loopback
//! Discord (REST + gateway websocket) and an instant scripted model, all
//! in this process.

use crate::common::{instant_setup, percentile};
use std::process::ExitCode;
use std::time::{Duration, Instant};
use switchboard_test_support::discord::{FakeDiscord, user};

/// People the sequential DMs rotate over.
const PEOPLE: u64 = 50;

/// Round trip per DM (message created → the bot's reply posted)
/// p50/p90/p99, then N people writing at once, and model requests per
/// message.
pub(crate) async fn discord(messages: usize, burst: usize) -> anyhow::Result<ExitCode> {
    let dc = FakeDiscord::start().await;
    let (model, dir, path) = instant_setup(
        messages + burst,
        "discord.main",
        &format!(
            "[channels.discord.main]\nbot_token = \"BENCH.TOKEN\"\napi_url = \"{}\"\nallowed_users = [\"*\"]\n",
            dc.url()
        ),
    )
    .await?;
    let gw = switchboard_gateway::embed::start(&path).await?;
    dc.wait_sessions(1, 0, 30).await;
    let wait_for = |n: usize| {
        let dc = &dc;
        async move {
            while dc.bot_post_count() < n {
                tokio::time::sleep(Duration::from_micros(200)).await;
            }
        }
    };
    let people: Vec<(u64, serde_json::Value)> = (0..PEOPLE)
        .map(|i| {
            let who = user(3000 + i, "ann");
            (dc.dm_with(&who), who)
        })
        .collect();
    let mut micros = Vec::with_capacity(messages);
    for i in 0..messages {
        let (dm, who) = &people[i % people.len()];
        let t = Instant::now();
        dc.say(*dm, who, &format!("message {i}"));
        wait_for(i + 1).await;
        micros.push(t.elapsed().as_micros() as u64);
    }
    micros.sort_unstable();
    let pct = |p: f64| percentile(&micros, p);
    let crowd: Vec<(u64, serde_json::Value)> = (0..burst as u64)
        .map(|i| {
            let who = user(6000 + i, "p");
            (dc.dm_with(&who), who)
        })
        .collect();
    let t = Instant::now();
    for (dm, who) in &crowd {
        dc.say(*dm, who, "all at once");
    }
    wait_for(messages + burst).await;
    let all = t.elapsed();
    println!("discord adapter, loopback Discord (REST + gateway websocket) + instant scripted model (same process)");
    println!(
        "  one DM, message to reply (n={messages}): p50 {:.2} ms   p90 {:.2} ms   p99 {:.2} ms",
        pct(0.5),
        pct(0.9),
        pct(0.99)
    );
    println!(
        "  {burst} people at once: all answered in {:.1} ms = {:.0} messages/s",
        all.as_secs_f64() * 1e3,
        burst as f64 / all.as_secs_f64()
    );
    crate::common::finish(gw, &dir, &model, messages + burst).await
}
