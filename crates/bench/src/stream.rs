//! `switchboard bench stream`: a scripted model streams `words` words over
//! `seconds` into a Telegram private chat (the loopback Bot API): the time
//! from the model's first token to the first visible text, the updates
//! made (drafts, or edits of one message on a Bot API without drafts) and
//! their rate against Telegram's one per second, and the messages posted.

use crate::common::instant_setup;
use std::process::ExitCode;
use std::time::{Duration, Instant};
use switchboard_test_support::telegram::{FakeTelegram, private_chat, user};
use switchboard_test_support::{ScriptedModel, Step};

pub(crate) async fn stream(words: usize, seconds: u64, runs: usize) -> anyhow::Result<ExitCode> {
    let tg = FakeTelegram::start().await;
    let (model, dir, path) = instant_setup(
        0,
        "telegram.main",
        &switchboard_test_support::config::telegram_main(&tg.url()),
    )
    .await?;
    let gw = switchboard_gateway::embed::start(&path).await?;
    let answer: String = switchboard_test_support::words("w", words);
    let every = Duration::from_secs(seconds) / words.max(1) as u32;
    println!(
        "streaming into a Telegram private chat (loopback Bot API), {words} words over {seconds} s, {runs} runs per mode"
    );
    for (mode, update) in [("drafts", "sendmessagedraft"), ("edits", "editmessagetext")] {
        if mode == "edits" {
            // A Bot API server before 9.3: one message edited instead.
            tg.without_drafts();
        }
        for run in 0..runs {
            model.push(Step::text(answer.clone()).streamed(every));
            let chat = 2000 + run as i64 + if mode == "edits" { 100 } else { 0 };
            let m = measure(&tg, &model, (chat, &answer, update), seconds).await?;
            println!(
                "  {mode} run {}: first text {:.0} ms after the first token; {} message(s), {} updates over {:.1} s = {:.2} gaps/s between updates (budget 1/s)",
                run + 1,
                m.first_text.as_secs_f64() * 1e3,
                m.messages,
                m.updates,
                m.streamed_for.as_secs_f64(),
                m.updates.saturating_sub(1) as f64 / m.streamed_for.as_secs_f64().max(1e-3)
            );
        }
    }
    drop(model);
    gw.stop().await;
    std::fs::remove_dir_all(&dir).ok();
    Ok(ExitCode::SUCCESS)
}

/// What one streamed answer looked like in the chat.
struct Measured {
    first_text: Duration,
    streamed_for: Duration,
    updates: usize,
    messages: usize,
}

/// Ask in `chat`, then watch until the whole `answer` is shown (as the
/// last edit, or as the message that follows the drafts).
async fn measure(
    tg: &FakeTelegram,
    model: &ScriptedModel,
    (chat, answer, update): (i64, &str, &str),
    seconds: u64,
) -> anyhow::Result<Measured> {
    let (sent_before, updates_before) = (tg.sent().len(), tg.calls(update).len());
    let edits_before = tg.calls("editmessagetext").len();
    let visible = || tg.sent().len() + tg.calls(update).len() - sent_before - updates_before;
    let arrivals_before = model.arrivals().len();
    tg.message(
        private_chat(chat, "Ann"),
        user(chat, "Ann"),
        "tell me a long story",
        None,
        None,
    );
    while visible() == 0 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let first_visible = Instant::now();
    let first_token = model.arrivals()[arrivals_before];
    let deadline = Instant::now() + Duration::from_secs(seconds * 4 + 30);
    // New calls of this answer, the last of them showing all of it.
    let whole = |calls: Vec<serde_json::Value>, before: usize| {
        calls.len() > before && calls.last().is_some_and(|c| c["text"] == answer)
    };
    while !(whole(tg.sent(), sent_before) || whole(tg.calls("editmessagetext"), edits_before)) {
        anyhow::ensure!(Instant::now() < deadline, "the answer never ended in full");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    Ok(Measured {
        first_text: first_visible.duration_since(first_token),
        streamed_for: first_visible.elapsed(),
        updates: tg.calls(update).len() - updates_before,
        messages: tg.sent().len() - sent_before,
    })
}
