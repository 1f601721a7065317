//! `switchboard bench stream`: a scripted model streams `words` words over
//! `seconds` into a Telegram private chat (the loopback Bot API): the time
//! from the model's first token to the first visible text, the edits made
//! for the message and their rate against Telegram's one per second.

use crate::bench::instant_setup;
use std::process::ExitCode;
use std::time::{Duration, Instant};
use switchboard_test_support::Step;
use switchboard_test_support::telegram::{FakeTelegram, private_chat, user};

pub(crate) async fn stream(words: usize, seconds: u64, runs: usize) -> anyhow::Result<ExitCode> {
    let tg = FakeTelegram::start().await;
    let (model, dir, path) = instant_setup(
        0,
        "telegram.main",
        &switchboard_test_support::config::telegram_main(&tg.url()),
    )
    .await?;
    let gw = crate::run::start(&path).await?;
    let answer: String = switchboard_test_support::words("w", words);
    let every = Duration::from_secs(seconds) / words.max(1) as u32;
    println!("streaming into a Telegram private chat (loopback Bot API), {words} words over {seconds} s, {runs} runs");
    for run in 0..runs {
        model.push(Step::text(answer.clone()).streamed(every));
        let (sent_before, edits_before) = (tg.sent().len(), tg.calls("editmessagetext").len());
        let arrivals_before = model.arrivals().len();
        let chat = 2000 + run as i64;
        tg.message(
            private_chat(chat, "Ann"),
            user(chat, "Ann"),
            "tell me a long story",
            None,
            None,
        );
        while tg.sent().len() == sent_before {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let first_visible = Instant::now();
        let first_token = model.arrivals()[arrivals_before];
        let deadline = Instant::now() + Duration::from_secs(seconds * 4 + 30);
        loop {
            let edits = tg.calls("editmessagetext");
            if edits.len() > edits_before && edits.last().is_some_and(|e| e["text"] == answer.as_str()) {
                break;
            }
            anyhow::ensure!(Instant::now() < deadline, "the answer never ended in full");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let streamed_for = first_visible.elapsed();
        let edits = tg.calls("editmessagetext").len() - edits_before;
        let messages = tg.sent().len() - sent_before;
        println!(
            "  run {}: first text {:.0} ms after the first token; {messages} message(s), {edits} edits over {:.1} s = {:.2} edits/s (budget 1/s)",
            run + 1,
            first_visible.duration_since(first_token).as_secs_f64() * 1e3,
            streamed_for.as_secs_f64(),
            edits as f64 / streamed_for.as_secs_f64().max(1e-3)
        );
    }
    drop(model);
    gw.stop().await;
    std::fs::remove_dir_all(&dir).ok();
    Ok(ExitCode::SUCCESS)
}
