//! Answers shown while they are written (`streaming`), through the real
//! `switchboard run` on a local channel: one message edited within the
//! edit interval, the final text exactly the answer and never sent twice,
//! long answers continuing in a new message without touching the finished
//! one, /stop saying so in the message, and groups left unstreamed.

mod support;

use serde_json::Value;
use std::time::Duration;
use support::{Gateway, Sandbox, free_port, main_agent_on};
use switchboard_test_support::{ScriptedModel, Step};

async fn setup(extra: &str) -> (ScriptedModel, Sandbox, Gateway) {
    support::team_gateway("[risk_profiles.default]\nlevel = \"full\"\n", extra).await
}

/// A scripted model and `switchboard run` with `main` on bot `channel`
/// (configured by `table`), tools unguarded, the local probe channel.
async fn bot_gateway(channel: &str, table: &str) -> (ScriptedModel, Sandbox, Gateway) {
    let model = ScriptedModel::start().await;
    let port = free_port();
    let config = format!(
        "{}[risk_profiles.default]\nlevel = \"full\"\n{table}[channels.local.probe]\nallowed_users = []\n",
        main_agent_on(&model.url(), port, channel)
    );
    let sandbox = Sandbox::new(&config);
    let gw = Gateway::start(&sandbox, port, "probe").await;
    (model, sandbox, gw)
}

/// A fake Discord with the gateway's bot connected to it.
async fn discord_bot() -> (
    switchboard_test_support::discord::FakeDiscord,
    ScriptedModel,
    Sandbox,
    Gateway,
) {
    let dc = switchboard_test_support::discord::FakeDiscord::start().await;
    let table = format!(
        "[channels.discord.main]\nbot_token = \"TEST.TOKEN\"\napi_url = \"{}\"\nallowed_users = [\"*\"]\n",
        dc.url()
    );
    let (model, sandbox, gw) = bot_gateway("discord.main", &table).await;
    dc.wait_sessions(1, 0, 20).await;
    (dc, model, sandbox, gw)
}

/// `words` numbered words streamed `every` apart into a direct chat:
/// the answer and what the bot did there once it was shown.
async fn stream_dm(
    model: &ScriptedModel,
    gw: &Gateway,
    chat: &str,
    word: &str,
    words: usize,
    every: u64,
) -> (String, Vec<Value>) {
    let answer = switchboard_test_support::words(word, words);
    model.push(Step::text(answer.clone()).streamed(Duration::from_millis(every)));
    let user = format!("cli:{}", chat.trim_start_matches("dm-"));
    gw.send("team", chat, &user, "go on", false, true).await;
    let events = until_shown(gw, chat, &format!("{word}{words}")).await;
    (answer, events)
}

/// What the bot did in `chat` once the answer ended with `last_words`.
async fn until_shown(gw: &Gateway, chat: &str, last_words: &str) -> Vec<Value> {
    let mut cursor = 0;
    gw.wait_for("team", &mut cursor, 30, |e| {
        e["chat"] == chat && e["text"].as_str().is_some_and(|t| t.ends_with(last_words))
    })
    .await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    gw.events("team", 0)
        .await
        .into_iter()
        .filter(|e| e["chat"] == chat)
        .collect()
}

fn of_kind<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["kind"] == kind).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_direct_answer_grows_in_one_message_and_ends_exactly_as_answered() {
    let (model, _sandbox, gw) = setup("").await;
    let (answer, events) = stream_dm(&model, &gw, "dm-bob", "word", 60, 25).await;
    let messages = of_kind(&events, "message");
    let edits = of_kind(&events, "message_edit");
    assert_eq!(messages.len(), 1, "one message, never a second copy: {events:#?}");
    assert!(!edits.is_empty(), "the message grew by edits");
    assert!(
        messages[0]["text"].as_str().unwrap().len() < answer.len(),
        "the first message was posted before the answer was complete"
    );
    let last = edits.last().unwrap();
    assert_eq!(last["text"], answer.as_str());
    assert_eq!(last["message_id"], messages[0]["message_id"]);
    // 60 words over 1.5 s with edits at most every 250 ms: a handful.
    assert!(edits.len() <= 8, "{} edits", edits.len());
    assert!(model.requests()[0]["stream"] == true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_answer_continues_in_a_new_message_and_the_finished_one_stays() {
    let (model, _sandbox, gw) = setup("").await;
    // About 2,600 characters: two local parts (2,000 each at most).
    let (answer, events) = stream_dm(&model, &gw, "dm-carol", "token", 300, 3).await;
    let messages = of_kind(&events, "message");
    assert_eq!(messages.len(), 2, "{events:#?}");
    let (first, second) = (messages[0]["message_id"].clone(), messages[1]["message_id"].clone());
    let second_at = messages[1]["seq"].as_u64().unwrap();
    assert!(
        events
            .iter()
            .filter(|e| e["kind"] == "message_edit" && e["message_id"] == first)
            .all(|e| e["seq"].as_u64().unwrap() < second_at),
        "the first message is not edited once the second exists"
    );
    let final_text = |id: &Value| {
        events
            .iter()
            .rev()
            .find(|e| e["message_id"] == *id && (e["kind"] == "message_edit" || e["kind"] == "message"))
            .map(|e| e["text"].as_str().unwrap().to_string())
            .unwrap()
    };
    let joined = format!("{} {}", final_text(&first), final_text(&second));
    assert_eq!(
        joined.split_whitespace().collect::<Vec<_>>(),
        answer.split_whitespace().collect::<Vec<_>>()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_ends_the_stream_and_the_message_says_so() {
    let (model, _sandbox, gw) = setup("").await;
    let answer: String = (1..=200).map(|i| format!("w{i} ")).collect();
    model.push(Step::text(answer).streamed(Duration::from_millis(50)));
    gw.send("team", "dm-dan", "cli:dan", "go on and on", false, true).await;
    let mut cursor = 0;
    gw.wait_for("team", &mut cursor, 20, |e| e["kind"] == "message_edit")
        .await;
    gw.send("team", "dm-dan", "cli:dan", "/stop", false, true).await;
    let stopped = gw
        .wait_for("team", &mut cursor, 20, |e| {
            e["text"].as_str().is_some_and(|t| t.ends_with("(stopped)"))
        })
        .await;
    assert_eq!(
        stopped["kind"], "message_edit",
        "the streamed message says it stopped: {stopped}"
    );
    tokio::time::sleep(Duration::from_millis(800)).await;
    let messages: Vec<Value> = gw
        .events("team", 0)
        .await
        .into_iter()
        .filter(|e| e["kind"] == "message" && e["chat"] == "dm-dan")
        .collect();
    assert!(
        messages.iter().all(|m| m["text"] != "(stopped)"),
        "no separate stopped message: {messages:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn groups_get_the_finished_answer_unless_configured_and_off_means_off() {
    let (model, _sandbox, gw) = setup("").await;
    model.push(Step::text("one answer for the group").streamed(Duration::from_millis(20)));
    gw.send("team", "general", "cli:bob", "@bot hello", true, false).await;
    let events = until_shown(&gw, "general", "for the group").await;
    assert_eq!(of_kind(&events, "message").len(), 1);
    assert!(of_kind(&events, "message_edit").is_empty(), "{events:#?}");
    assert_eq!(model.requests()[0]["stream"], false, "nobody listens: no stream asked");

    let (model, _sandbox, gw) = setup("streaming = \"off\"\n").await;
    model.push(Step::text("a direct answer, not streamed"));
    gw.send("team", "dm-bob", "cli:bob", "hello", false, true).await;
    let events = until_shown(&gw, "dm-bob", "not streamed").await;
    assert!(of_kind(&events, "message_edit").is_empty(), "{events:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn telegram_private_chats_see_a_draft_grow_then_the_answer_once() {
    use switchboard_test_support::telegram::{FakeTelegram, private_chat, user};
    let tg = FakeTelegram::start().await;
    let table = switchboard_test_support::config::telegram_main(&tg.url());
    let (model, _sandbox, _gw) = bot_gateway("telegram.main", &table).await;
    let answer: String = switchboard_test_support::words("piece", 40);
    model.push(Step::text(answer.clone()).streamed(Duration::from_millis(60)));
    let started = std::time::Instant::now();
    tg.message(private_chat(11, "Ann"), user(11, "Ann"), "stream please", None, None);
    let drafts = tg.wait_calls("sendmessagedraft", 1, 20).await;
    let first_visible = started.elapsed();
    assert!(tg.sent().is_empty(), "nothing posted while the answer is written");
    assert!(drafts[0]["text"].as_str().unwrap().len() < answer.len());
    let sent = tg.wait_sent(1, 20).await;
    let total = started.elapsed();
    assert_eq!(sent[0]["text"], answer.as_str(), "the answer, once, as a message");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(tg.sent().len(), 1, "never the answer a second time");
    assert!(tg.calls("editmessagetext").is_empty(), "no message edited");
    let drafts = tg.calls("sendmessagedraft");
    let id = &drafts[0]["draft_id"];
    assert!(drafts.iter().all(|d| &d["draft_id"] == id), "one draft: {drafts:#?}");
    assert!(
        drafts.iter().all(|d| answer.starts_with(d["text"].as_str().unwrap())),
        "each draft is the answer so far"
    );
    // At most one update a second.
    let allowed = total.as_secs_f64().ceil() as usize + 1;
    assert!(drafts.len() <= allowed, "{} drafts in {total:?}", drafts.len());
    assert!(first_visible < Duration::from_secs(3), "{first_visible:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_api_without_drafts_shows_one_message_edited_at_most_once_a_second() {
    use switchboard_test_support::telegram::{FakeTelegram, private_chat, user};
    let tg = FakeTelegram::start().await;
    let table = switchboard_test_support::config::telegram_main(&tg.url());
    let (model, _sandbox, _gw) = bot_gateway("telegram.main", &table).await;
    tg.without_drafts();
    let answer: String = switchboard_test_support::words("piece", 40);
    model.push(Step::text(answer.clone()).streamed(Duration::from_millis(60)));
    let started = std::time::Instant::now();
    tg.message(private_chat(11, "Ann"), user(11, "Ann"), "stream please", None, None);
    let sent = tg.wait_sent(1, 20).await;
    let first_visible = started.elapsed();
    assert!(
        sent[0]["text"].as_str().unwrap().len() < answer.len(),
        "posted while still being written"
    );
    // Wait for the last edit to carry the whole answer.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let edits = loop {
        let edits = tg.calls("editmessagetext");
        if edits.last().is_some_and(|e| e["text"] == answer.as_str()) {
            break edits;
        }
        assert!(std::time::Instant::now() < deadline, "no final edit: {edits:#?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let total = started.elapsed();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(tg.sent().len(), 1, "one message, never the answer a second time");
    assert_eq!(
        tg.calls("editmessagetext").len(),
        edits.len(),
        "nothing after the final edit"
    );
    // At most one edit a second (and the final one).
    let allowed = total.as_secs_f64().ceil() as usize + 1;
    assert!(edits.len() <= allowed, "{} edits in {total:?}", edits.len());
    assert!(edits.iter().all(|e| e["message_id"] == sent[0]["message_id"]));
    assert!(first_visible < Duration::from_secs(3), "{first_visible:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_discord_dm_sees_one_message_edited_into_the_answer() {
    let (dc, model, _sandbox, _gw) = discord_bot().await;
    let answer: String = switchboard_test_support::words("part", 40);
    model.push(Step::text(answer.clone()).streamed(Duration::from_millis(50)));
    let ann = switchboard_test_support::discord::user(11, "ann");
    let dm = dc.dm_with(&ann);
    dc.say(dm, &ann, "stream to me");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let mine = dc.bot_messages(dm);
        if mine.len() == 1 && mine[0]["content"] == answer.as_str() {
            break;
        }
        assert!(mine.len() <= 1, "more than one message: {mine:#?}");
        assert!(
            std::time::Instant::now() < deadline,
            "never showed the answer: {mine:#?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let calls = dc.calls();
    let posts = calls
        .iter()
        .filter(|(m, p, _)| m == "POST" && p.ends_with("/messages"))
        .count();
    let edits = calls
        .iter()
        .filter(|(m, p, _)| m == "PATCH" && p.contains("/messages/"))
        .count();
    assert_eq!(posts, 1, "{calls:?}");
    assert!((1..=4).contains(&edits), "{edits} edits over about 2 s");
}

/// Two answers in a row that begin alike are two messages: the second
/// stream's first part is not taken for the first one (a nonce made from
/// the text made Discord hand back the earlier message, which the second
/// stream then edited).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_discord_answer_that_begins_like_the_last_one_is_a_message_of_its_own() {
    let (dc, model, _sandbox, _gw) = discord_bot().await;
    let answer: String = switchboard_test_support::words("same", 20);
    let ann = switchboard_test_support::discord::user(11, "ann");
    let dm = dc.dm_with(&ann);
    for (n, ask) in [(1, "first"), (2, "second")] {
        model.push(Step::text(answer.clone()).streamed(Duration::from_millis(30)));
        dc.say(dm, &ann, ask);
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while dc.bot_messages(dm).len() < n || dc.bot_messages(dm).iter().any(|m| m["content"] != answer.as_str()) {
            assert!(
                std::time::Instant::now() < deadline,
                "answer {n} never shown whole: {:#?}",
                dc.bot_messages(dm)
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(dc.bot_messages(dm).len(), 2, "{:#?}", dc.bot_messages(dm));
}
