//! The whole gateway against an instant model.

use crate::common::{instant_setup, percentile, rss_mib};
use std::process::ExitCode;
use std::time::Instant;
use switchboard_core::ChatAddress;
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
        "[channels.local.bench]\nallowed_users = [\"*\"]\n",
    )
    .await?;
    let t = Instant::now();
    let gw = switchboard_gateway::embed::start(&path).await?;
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
        guild: None,
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
