//! The Telegram adapter against a loopback Bot API.

use crate::common::{finish, instant_setup, percentile};
use std::process::ExitCode;
use std::time::Instant;
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
    let gw = switchboard_gateway::embed::start(&path).await?;
    let wait_for = |n: usize| {
        let tg = &tg;
        async move {
            while tg.sent().len() < n {
                tokio::time::sleep(std::time::Duration::from_micros(200)).await;
            }
        }
    };
    let writes_before = gw.runtime.store().writes();
    let calls_before = tg.call_counts();
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
    let calls = per_message(&calls_before, &tg.call_counts(), messages);
    micros.sort_unstable();
    let pct = |p: f64| percentile(&micros, p);
    let calls_before = tg.call_counts();
    let t = Instant::now();
    for u in 0..burst {
        let id = 5000 + u as i64;
        tg.message(private_chat(id, "P"), user(id, "P"), "all at once", None, None);
    }
    wait_for(messages + burst).await;
    let all = t.elapsed();
    // Calls that follow an answer (a final status) land shortly after it.
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let burst_calls = per_message(&calls_before, &tg.call_counts(), burst);
    println!("telegram adapter, loopback Bot API + instant scripted model (same process)");
    println!(
        "  one DM, update to reply (n={messages}): p50 {:.2} ms   p90 {:.2} ms   p99 {:.2} ms",
        pct(0.5),
        pct(0.9),
        pct(0.99)
    );
    println!("  store writes per DM: {writes:.1}");
    println!("  Bot API calls per DM: {calls}");
    println!(
        "  {burst} people at once: all answered in {:.1} ms = {:.0} updates/s",
        all.as_secs_f64() * 1e3,
        burst as f64 / all.as_secs_f64()
    );
    println!("  Bot API calls per burst message: {burst_calls}");
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

/// Calls per message by method between two counts, e.g. `getupdates 1.0, sendmessage 1.0`.
fn per_message(
    before: &std::collections::BTreeMap<String, usize>,
    after: &std::collections::BTreeMap<String, usize>,
    messages: usize,
) -> String {
    after
        .iter()
        .map(|(m, n)| (m, n - before.get(m).copied().unwrap_or(0)))
        .filter(|(_, n)| *n > 0)
        .map(|(m, n)| format!("{m} {:.2}", n as f64 / messages.max(1) as f64))
        .collect::<Vec<_>>()
        .join(", ")
}
