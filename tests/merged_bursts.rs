//! Merged bursts on Telegram with the channel's defaults (no fixed wait): a
//! lone message starts its turn at once; messages of the same person that
//! come before the model has written anything join the turn (the request
//! is sent again with all of them, the dropped ones charged in the cost
//! ledger); one that comes while the answer is being written waits and is
//! answered next, together with any others; a crash between a dropped
//! request and its resend answers once. With `merge_window_ms` (opt-in) a
//! message waits for the next; never across people.

mod support;

use serde_json::Value;
use std::time::{Duration, Instant};
use support::{Gateway, Sandbox, free_port, main_agent_on};
use switchboard_test_support::telegram::{BOT_USERNAME, FakeTelegram, private_chat, supergroup, user};
use switchboard_test_support::{ScriptedModel, Step};

const GROUP: i64 = -100_500;

fn config(model: &str, tg: &str, port: u16, extra: &str) -> String {
    format!(
        "{}[channels.telegram.main]\nbot_token = \"123:TEST\"\napi_url = \"{tg}\"\nallowed_users = [\"*\"]\n{extra}[channels.local.probe]\nallowed_users = []\n",
        main_agent_on(model, port, "telegram.main")
    )
}

/// The person messages of a model request, in order.
fn asked(r: &Value) -> Vec<String> {
    r["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn asks(n: usize) -> impl Fn(&Value) -> bool + Send + Sync + 'static {
    move |r| asked(r).len() == n
}

fn ann() -> (Value, Value) {
    (private_chat(11, "Ann"), user(11, "Ann"))
}

/// What the ledger holds for today.
async fn ledger(sandbox: &Sandbox) -> switchboard_store::CostTotals {
    let store = switchboard_store::Store::open(&format!("sqlite://{}/data/control_plane.db", sandbox.path().display()))
        .await
        .unwrap();
    let day = switchboard_store::utc_day(switchboard_store::now_ms());
    store.costs().total(&day).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_wait_by_default_and_a_burst_before_the_first_token_is_one_request() {
    let model = ScriptedModel::start().await;
    let tg = FakeTelegram::start().await;
    let port = free_port();
    let sandbox = Sandbox::new(&config(&model.url(), &tg.url(), port, ""));
    let _gw = Gateway::start(&sandbox, port, "probe").await;

    // A lone message goes to the model at once (it used to wait 1.5 s for
    // a next one).
    model.push(Step::text("Hello Ann."));
    let (chat, from) = ann();
    let sent_at = Instant::now();
    tg.message(chat, from, "hello", None, None);
    let sent = tg.wait_sent(1, 20).await;
    assert_eq!(sent[0]["text"], "Hello Ann.");
    let waited = model.arrivals()[0].duration_since(sent_at);
    assert!(
        waited < Duration::from_millis(1000),
        "the model was asked {waited:?} after the message: nothing should wait for a next one"
    );
    let calls_before = ledger(&sandbox).await.calls;

    // Three messages 200 ms apart to a model that takes 1 s to its first
    // token: the requests for the first one and the first two are dropped
    // (their answers would be "too early"), one answer comes from a
    // request with all three.
    model.push(Step::text("too early: one").delay(Duration::from_secs(1)).when(asks(2)));
    model.push(Step::text("too early: two").delay(Duration::from_secs(1)).when(asks(3)));
    model.push(
        Step::text("One answer to all three.")
            .delay(Duration::from_secs(1))
            .when(asks(4)),
    );
    for text in ["I need a hand", "with the deploy script", "it fails on step 3"] {
        let (chat, from) = ann();
        tg.message(chat, from, text, None, None);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let sent = tg.wait_sent(2, 20).await;
    assert_eq!(sent[1]["text"], "One answer to all three.");
    tokio::time::sleep(Duration::from_millis(2000)).await;
    assert_eq!(tg.sent_count(), 2, "one answer for the burst");
    let requests = model.requests();
    assert_eq!(requests.len(), 4, "the first message, then the burst asked three times");
    assert_eq!(
        asked(&requests[3]),
        ["hello", "I need a hand", "with the deploy script", "it fails on step 3"]
    );
    let spent = ledger(&sandbox).await;
    assert_eq!(
        spent.calls - calls_before,
        3,
        "the two dropped requests are in the cost ledger with the answered one"
    );

    // After the answer, a new message is a turn of its own; the transcript
    // kept every message once, in order.
    model.push(Step::text("Step 3 needs the token."));
    let (chat, from) = ann();
    tg.message(chat, from, "any idea?", None, None);
    let sent = tg.wait_sent(3, 20).await;
    assert_eq!(sent[2]["text"], "Step 3 needs the token.");
    assert_eq!(
        asked(&model.requests()[4]),
        [
            "hello",
            "I need a hand",
            "with the deploy script",
            "it fails on step 3",
            "any idea?"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quick_messages_to_an_instant_model_are_each_answered_once() {
    let model = ScriptedModel::start().await;
    let tg = FakeTelegram::start().await;
    let port = free_port();
    let sandbox = Sandbox::new(&config(&model.url(), &tg.url(), port, ""));
    let mut gw = Gateway::start(&sandbox, port, "probe").await;
    for _ in 0..3 {
        model.push(Step::text("ok"));
    }
    for text in ["one", "two", "three"] {
        let (chat, from) = ann();
        tg.message(chat, from, text, None, None);
    }
    tg.wait_sent(1, 20).await;
    tokio::time::sleep(Duration::from_millis(2000)).await;
    let last = model.requests().last().cloned().unwrap();
    assert_eq!(asked(&last), ["one", "two", "three"], "every message once, in order");
    let answers = tg.sent_count();
    assert!((1..=3).contains(&answers), "{answers} answers to three messages");
    // Nothing was left pending: a restart answers nothing again.
    tokio::time::sleep(Duration::from_millis(500)).await;
    gw.kill();
    let _gw = Gateway::start(&sandbox, port, "probe").await;
    tokio::time::sleep(Duration::from_millis(2000)).await;
    assert_eq!(tg.sent_count(), answers, "nothing answered twice after a restart");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_while_the_answer_is_written_is_answered_next_with_the_others() {
    let model = ScriptedModel::start().await;
    let tg = FakeTelegram::start().await;
    let port = free_port();
    let sandbox = Sandbox::new(&config(&model.url(), &tg.url(), port, ""));
    let _gw = Gateway::start(&sandbox, port, "probe").await;
    // Direct chats stream by default: the first words are drafted
    // (`sendMessageDraft`) while the rest is still coming.
    let long = "Here is a long answer that takes a while to write, word by word, so that the person can see it grow";
    model.push(Step::text(long).streamed(Duration::from_millis(150)));
    model.push(Step::text("About the two follow-ups.").when(asks(3)));
    let (chat, from) = ann();
    tg.message(chat, from, "tell me a story", None, None);
    tg.wait_calls("sendmessagedraft", 1, 20).await;
    for text in ["also this", "and that"] {
        let (chat, from) = ann();
        tg.message(chat, from, text, None, None);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while !tg.sent().iter().any(|m| m["text"] == "About the two follow-ups.") {
        assert!(
            Instant::now() < deadline,
            "the follow-ups were not answered together: {:?}",
            tg.calls("sendmessage")
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let requests = model.requests();
    assert_eq!(requests.len(), 2, "the answer being written was not asked again");
    assert_eq!(asked(&requests[1]), ["tell me a story", "also this", "and that"]);
    assert_eq!(tg.sent()[0]["text"], long, "the first answer was written to the end");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_between_dropping_a_request_and_its_answer_answers_once() {
    let model = ScriptedModel::start().await;
    let tg = FakeTelegram::start().await;
    let port = free_port();
    let sandbox = Sandbox::new(&config(&model.url(), &tg.url(), port, ""));
    let mut gw = Gateway::start(&sandbox, port, "probe").await;
    model.push(Step::text("too early").delay(Duration::from_secs(2)).when(asks(1)));
    model.push(Step::text("never sent").delay(Duration::from_secs(600)).when(asks(2)));
    let (chat, from) = ann();
    tg.message(chat, from, "first part", None, None);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (chat, from) = ann();
    tg.message(chat, from, "second part", None, None);
    let deadline = Instant::now() + Duration::from_secs(20);
    while model.requests().len() < 2 {
        assert!(Instant::now() < deadline, "the request was not sent again");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    gw.kill();
    model.push(Step::text("Both parts answered.").when(asks(2)));
    let _gw = Gateway::start(&sandbox, port, "probe").await;
    let sent = tg.wait_sent(1, 30).await;
    assert_eq!(sent[0]["text"], "Both parts answered.");
    tokio::time::sleep(Duration::from_millis(2000)).await;
    assert_eq!(tg.sent_count(), 1, "answered once");
    let requests = model.requests();
    assert_eq!(asked(requests.last().unwrap()), ["first part", "second part"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fixed_window_when_asked_for_never_across_people() {
    let model = ScriptedModel::start().await;
    let tg = FakeTelegram::start().await;
    let port = free_port();
    let extra = "streaming = \"off\"\nmerge_window_ms = 1500\n";
    let sandbox = Sandbox::new(&config(&model.url(), &tg.url(), port, extra));
    let mut gw = Gateway::start(&sandbox, port, "probe").await;

    // Three messages 200 ms apart to an instant model: one request.
    model.push(Step::text("One answer to all three."));
    for text in ["I need a hand", "with the deploy script", "it fails on step 3"] {
        let (chat, from) = ann();
        tg.message(chat, from, text, None, None);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let sent = tg.wait_sent(1, 20).await;
    assert_eq!(sent[0]["text"], "One answer to all three.");
    tokio::time::sleep(Duration::from_millis(2000)).await;
    assert_eq!(model.requests().len(), 1, "one model request for the burst");
    assert_eq!(
        asked(&model.requests()[0]),
        ["I need a hand", "with the deploy script", "it fails on step 3"]
    );

    // Two people writing at once in a group: a turn each.
    model.push(Step::text("For Bob.").when_last_contains("from Bob"));
    model.push(Step::text("For Cat.").when_last_contains("from Cat"));
    for (id, name) in [(12, "Bob"), (13, "Cat")] {
        tg.message(
            supergroup(GROUP, "team"),
            user(id, name),
            &format!("@{BOT_USERNAME} a question from {name}"),
            None,
            None,
        );
    }
    let sent = tg.wait_sent(3, 20).await;
    let mut answers: Vec<&str> = sent[1..].iter().map(|m| m["text"].as_str().unwrap()).collect();
    answers.sort_unstable();
    assert_eq!(answers, ["For Bob.", "For Cat."]);
    assert_eq!(model.requests().len(), 3, "one request per person");

    // Every merged message was marked answered: a restart answers nothing
    // again. Killed after the delivered marks are written (not in the
    // instant between an answer reaching the chat and its mark, the one
    // window of at-least-once delivery, docs/performance.md).
    tokio::time::sleep(Duration::from_millis(500)).await;
    gw.kill();
    let _gw = Gateway::start(&sandbox, port, "probe").await;
    tokio::time::sleep(Duration::from_millis(3000)).await;
    assert_eq!(tg.sent_count(), 3, "nothing answered twice after a restart");
    assert_eq!(model.requests().len(), 3);
}
