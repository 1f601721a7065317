//! Rows a fixed wait before a turn would show, and the instant model of the
//! other rows hides: a lone direct message to a model that takes a second
//! to its first token (how long until the person sees any text), and three
//! messages from one person 200 ms apart to that model (how many model
//! requests were started and how many answers were sent).

use std::time::{Duration, Instant};
use switchboard_test_support::ScriptedModel;
use switchboard_test_support::telegram::{FakeTelegram, private_chat, user};

/// The model's time to its first token in these rows.
pub(crate) const FIRST_TOKEN: Duration = Duration::from_secs(1);

/// The person of these rows (an id no other row uses).
const PERSON: i64 = 7_000_000;

/// Calls that show the person text: a message or a draft of one.
fn texts_shown(tg: &FakeTelegram) -> usize {
    let counts = tg.call_counts();
    ["sendmessage", "sendmessagedraft"]
        .iter()
        .map(|m| counts.get(*m).copied().unwrap_or(0))
        .sum()
}

/// Ms from a lone direct message to the first text shown, the model taking
/// `FIRST_TOKEN` to answer.
pub(crate) async fn lone_dm(tg: &FakeTelegram, model: &ScriptedModel) -> anyhow::Result<f64> {
    model.echo_after(FIRST_TOKEN);
    let before = texts_shown(tg);
    let t = Instant::now();
    tg.message(
        private_chat(PERSON, "Sol"),
        user(PERSON, "Sol"),
        "a lone question",
        None,
        None,
    );
    while texts_shown(tg) == before {
        anyhow::ensure!(
            t.elapsed() < Duration::from_secs(60),
            "the lone message was never answered"
        );
        tokio::time::sleep(Duration::from_micros(500)).await;
    }
    Ok(t.elapsed().as_secs_f64() * 1e3)
}

/// Three messages of one person 200 ms apart: (model requests started,
/// answers sent), counted once everything has settled.
pub(crate) async fn burst_of_three(tg: &FakeTelegram, model: &ScriptedModel) -> anyhow::Result<(f64, f64)> {
    model.echo_after(FIRST_TOKEN);
    let (asked, sent) = (model.served(), tg.sent_count());
    let t = Instant::now();
    for part in ["first part", "second part", "third part"] {
        tg.message(
            private_chat(PERSON + 1, "Tia"),
            user(PERSON + 1, "Tia"),
            part,
            None,
            None,
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    while tg.sent_count() == sent {
        anyhow::ensure!(t.elapsed() < Duration::from_secs(60), "the burst was never answered");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // Whatever else comes (a second answer, a late request) comes within
    // two of the model's answers.
    tokio::time::sleep(FIRST_TOKEN * 2 + Duration::from_millis(500)).await;
    model.echo_after(Duration::ZERO);
    Ok(((model.served() - asked) as f64, (tg.sent_count() - sent) as f64))
}
