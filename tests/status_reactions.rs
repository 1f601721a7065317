//! Status reactions through `switchboard run`: on Telegram (with the
//! channel's defaults) a slow turn's message goes 🤔 → 👍, one waiting
//! behind another person's turn 👀 → 🤔 → 👍, at most one change a second,
//! a quick answer gets none, a failed turn ends 😢, and
//! `status_reactions = false` sets none; on Discord the bot's reaction on a slow turn's message ends as ✅ alone
//! (each earlier one removed), a quick answer gets no reaction at all and a
//! quick failure gets ❌.

mod support;

use serde_json::Value;
use std::time::Duration;
use support::{Gateway, Sandbox, free_port, main_agent_on};
use switchboard_test_support::discord::{FakeDiscord, user as discord_user};
use switchboard_test_support::telegram::{BOT_USERNAME, FakeTelegram, private_chat, supergroup, user};
use switchboard_test_support::{ScriptedModel, Step};

fn telegram(model: &str, tg: &str, port: u16, extra: &str) -> String {
    format!(
        "{}[channels.telegram.main]\nbot_token = \"123:TEST\"\napi_url = \"{tg}\"\nallowed_users = [\"*\"]\nstreaming = \"off\"\n{extra}[channels.local.probe]\nallowed_users = []\n",
        main_agent_on(model, port, "telegram.main")
    )
}

/// The reactions set on message `id`: (emoji, when in Unix ms).
fn reactions_on(tg: &FakeTelegram, id: i64) -> Vec<(String, u64)> {
    tg.calls("setmessagereaction")
        .iter()
        .filter(|c| c["message_id"] == id)
        .map(|c| {
            let emoji = c["reaction"][0]["emoji"].as_str().unwrap_or_default().to_string();
            (emoji, c["_at_ms"].as_u64().unwrap())
        })
        .collect()
}

/// Waits until message `id` has its final reaction.
async fn until_final(tg: &FakeTelegram, id: i64) -> Vec<(String, u64)> {
    for _ in 0..100 {
        let r = reactions_on(tg, id);
        if r.last().is_some_and(|(e, _)| e == "👍" || e == "😢") {
            return r;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no final reaction on {id}: {:?}", reactions_on(tg, id));
}

fn emoji(r: &[(String, u64)]) -> Vec<&str> {
    r.iter().map(|(e, _)| e.as_str()).collect()
}

fn at_most_one_a_second(r: &[(String, u64)]) {
    for w in r.windows(2) {
        assert!(w[1].1 >= w[0].1 + 990, "two changes within a second: {r:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn telegram_messages_show_taken_working_and_how_they_ended() {
    let model = ScriptedModel::start().await;
    let tg = FakeTelegram::start().await;
    let port = free_port();
    let sandbox = Sandbox::new(&telegram(&model.url(), &tg.url(), port, ""));
    let _gw = Gateway::start(&sandbox, port, "probe").await;

    // A turn that takes a while: working from the start (nothing waits for
    // a next message), then done.
    model.push(Step::text("Done thinking.").delay(Duration::from_millis(2500)));
    let slow = tg.message(private_chat(11, "Ann"), user(11, "Ann"), "think hard", None, None);
    let r = until_final(&tg, slow).await;
    assert_eq!(emoji(&r), ["🤔", "👍"], "{r:?}");
    at_most_one_a_second(&r);
    assert_eq!(tg.wait_sent(1, 20).await[0]["text"], "Done thinking.");

    // A quick answer gets no reaction at all (the answer says it).
    model.push(Step::text("Quick."));
    let quick = tg.message(private_chat(11, "Ann"), user(11, "Ann"), "quick one", None, None);
    tg.wait_sent(2, 20).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(reactions_on(&tg, quick).is_empty(), "{:?}", reactions_on(&tg, quick));

    // In a group, Cat's message waits behind Bob's turn: taken, then
    // working, then done.
    model.push(
        Step::text("For Bob.")
            .delay(Duration::from_millis(2500))
            .when_last_contains("from Bob"),
    );
    model.push(Step::text("For Cat.").when_last_contains("from Cat"));
    tg.message(
        supergroup(-100_900, "team"),
        user(13, "Bob"),
        &format!("@{BOT_USERNAME} from Bob"),
        None,
        None,
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    let waiting = tg.message(
        supergroup(-100_900, "team"),
        user(14, "Cat"),
        &format!("@{BOT_USERNAME} from Cat"),
        None,
        None,
    );
    let r = until_final(&tg, waiting).await;
    assert_eq!(emoji(&r)[0], "👀", "{r:?}");
    assert_eq!(*emoji(&r).last().unwrap(), "👍");
    assert!(r.len() <= 3, "{r:?}");
    at_most_one_a_second(&r);
    tg.wait_sent(4, 20).await;

    // A failed turn ends 😢.
    model.push(Step::status(500));
    let failed = tg.message(private_chat(12, "Bob"), user(12, "Bob"), "break please", None, None);
    let r = until_final(&tg, failed).await;
    assert_eq!(*emoji(&r).last().unwrap(), "😢", "{r:?}");
    at_most_one_a_second(&r);
    tg.wait_sent(5, 20).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn telegram_status_reactions_can_be_turned_off() {
    let model = ScriptedModel::start().await;
    let tg = FakeTelegram::start().await;
    let port = free_port();
    let config = telegram(&model.url(), &tg.url(), port, "status_reactions = false\n");
    let sandbox = Sandbox::new(&config);
    let _gw = Gateway::start(&sandbox, port, "probe").await;
    model.push(Step::text("Hi."));
    tg.message(private_chat(11, "Ann"), user(11, "Ann"), "hello", None, None);
    tg.wait_sent(1, 20).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(tg.calls("setmessagereaction").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discord_messages_end_with_one_done_reaction() {
    let model = ScriptedModel::start().await;
    let dc = FakeDiscord::start().await;
    let port = free_port();
    let config = format!(
        "{}[channels.discord.main]\nbot_token = \"TEST.TOKEN\"\napi_url = \"{}\"\nallowed_users = [\"*\"]\nstreaming = \"off\"\n[channels.local.probe]\nallowed_users = []\n",
        main_agent_on(&model.url(), port, "discord.main"),
        dc.url()
    );
    let sandbox = Sandbox::new(&config);
    let _gw = Gateway::start(&sandbox, port, "probe").await;
    dc.wait_sessions(1, 0, 20).await;
    let ann = discord_user(21, "ann");
    model.push(Step::text("In the guild.").delay(Duration::from_millis(1500)));
    let asked = dc.say(FakeDiscord::GENERAL, &ann, "<@1100000000000000001> hello there");
    dc.wait_bot_messages(asked, 1, 20).await;
    let dm = dc.dm_with(&ann);
    model.push(Step::text("In the DM.").delay(Duration::from_millis(1500)));
    let private = dc.say(dm, &ann, "and privately");
    dc.wait_bot_messages(dm, 1, 20).await;
    for (channel, message) in [(FakeDiscord::GENERAL, asked), (dm, private)] {
        assert_eq!(
            settled(&dc, channel, message, "✅").await,
            ["✅"],
            "message {message} in {channel}"
        );
    }
    let puts = |message: u64| -> Vec<(String, String, Value)> {
        dc.calls()
            .into_iter()
            .filter(|(method, path, _)| path.contains(&format!("/messages/{message}/reactions/")) && method == "PUT")
            .collect()
    };
    assert!(puts(asked).len() >= 2, "a first reaction, then ✅: {:?}", puts(asked));

    // A quick answer is its own sign: no reaction, before or after.
    model.push(Step::text("Quick."));
    let quick = dc.say(dm, &ann, "quick one");
    dc.wait_bot_messages(dm, 2, 20).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(puts(quick).is_empty(), "{:?}", puts(quick));
    assert!(dc.own_reactions(dm, quick).is_empty());

    // A quick failure is marked all the same.
    model.push(Step::status(500));
    let broken = dc.say(dm, &ann, "break please");
    assert_eq!(settled(&dc, dm, broken, "❌").await, ["❌"]);
}

/// The bot's reactions on `message` once they are `[last]` (or after 5 s).
async fn settled(dc: &FakeDiscord, channel: u64, message: u64, last: &str) -> Vec<String> {
    let mut now: Vec<String> = Vec::new();
    for _ in 0..50 {
        now = dc.own_reactions(channel, message);
        if now == [last] {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    now
}
