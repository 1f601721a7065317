//! The Discord adapter through the real `switchboard run`, against the
//! loopback Discord (REST + gateway websocket): people write, press buttons
//! and use application commands; the tests read what the bot did.

mod support;

use serde_json::{Value, json};
use std::time::Duration;
use support::{Gateway, Sandbox, free_port, main_agent_on, ops_room_approvals};
use switchboard_test_support::discord::{BOT_ID, FakeDiscord, Kind, user};
use switchboard_test_support::{ScriptedModel, Step, last_message_text};

/// Answers arrive whole here (streamed answers are tested in streaming.rs).
fn config(model: &str, dc: &str, ops: u64, port: u16) -> String {
    format!(
        r#"{}{}[channels.discord.main]
bot_token = "TEST.TOKEN"
api_url = "{dc}"
allowed_users = ["*"]
streaming = "off"
rooms = {{ "ops" = "{ops}" }}
[channels.local.probe]
allowed_users = []
"#,
        main_agent_on(model, port, "discord.main"),
        ops_room_approvals("discord.main", "discord:7")
    )
}

struct World {
    model: ScriptedModel,
    dc: FakeDiscord,
    ops: u64,
    gw: Gateway,
    sandbox: Sandbox,
    port: u16,
}

async fn setup() -> World {
    let model = ScriptedModel::start().await;
    let dc = FakeDiscord::start().await;
    let ops = dc.add_channel(Kind::Text, "ops");
    let port = free_port();
    let sandbox = Sandbox::new(&config(&model.url(), &dc.url(), ops, port));
    let gw = Gateway::start(&sandbox, port, "probe").await;
    dc.wait_sessions(1, 0, 20).await;
    World {
        model,
        dc,
        ops,
        gw,
        sandbox,
        port,
    }
}

fn content(m: &Value) -> &str {
    m["content"].as_str().unwrap_or("")
}

fn mention(text: &str) -> String {
    format!("<@{BOT_ID}> {text}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mention_starts_a_thread_that_is_the_conversation_and_dms_are_answered() {
    let w = setup().await;
    let ann = user(11, "ann");
    w.model
        .push(Step::text("First answer.").when_last_contains("what is up"));
    w.model
        .push(Step::text("Second answer.").when_last_contains("and then"));
    // Slow enough that typing shows (a quick answer needs none).
    w.model.push(
        Step::text("DM answer.")
            .when_last_contains("privately")
            .delay(Duration::from_millis(1500)),
    );
    w.dc.say(FakeDiscord::GENERAL, &ann, "just chatting, not for the bot");
    let asked = w.dc.say(FakeDiscord::GENERAL, &ann, &mention("what is up"));
    // The answer is in a thread started under the person's message.
    let in_thread = w.dc.wait_bot_messages(asked, 1, 20).await;
    assert_eq!(content(&in_thread[0]), "First answer.");
    assert_eq!(w.dc.threads_of(FakeDiscord::GENERAL), [asked]);
    assert!(
        w.dc.bot_messages(FakeDiscord::GENERAL).is_empty(),
        "nothing in the channel itself"
    );
    assert_eq!(
        in_thread[0]["allowed_mentions"],
        json!({"parse": []}),
        "model text never pings"
    );
    // A follow-up in the thread needs no mention and carries the history.
    w.dc.say(asked, &ann, "and then?");
    let in_thread = w.dc.wait_bot_messages(asked, 2, 20).await;
    assert_eq!(content(&in_thread[1]), "Second answer.");
    let reqs = w.model.requests();
    let history = reqs[1]["messages"].to_string();
    assert!(
        history.contains("what is up") && history.contains("First answer."),
        "{history}"
    );
    assert_eq!(w.dc.typing_count(), 0, "quick answers show no typing");
    // A DM is always answered, in the DM.
    let dm = w.dc.dm_with(&ann);
    w.dc.say(dm, &ann, "privately now");
    let answered = w.dc.wait_bot_messages(dm, 1, 20).await;
    assert_eq!(content(&answered[0]), "DM answer.");
    assert_eq!(
        w.model.requests().len(),
        3,
        "the unmentioned message never reached the model"
    );
    assert!(w.dc.typing_count() >= 1, "typing was shown");
    let intents = w.dc.last_intents();
    assert_eq!(intents & (1 << 15), 1 << 15, "MESSAGE_CONTENT asked for");
    assert_eq!(last_message_text(&reqs[0]), "what is up", "the mention is cut out");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_reply_arrives_in_parts_with_code_blocks_balanced_while_429s_are_absorbed() {
    let w = setup().await;
    let ann = user(11, "ann");
    let long = format!(
        "Intro @everyone\n```rust\n{}```\nEnd.",
        (0..200)
            .map(|i| format!("let line_{i:03} = {i}; // filler\n"))
            .collect::<String>()
    );
    assert!(long.chars().count() > 5000);
    w.model.push(Step::text(long.clone()));
    w.dc.rate_limit(2);
    let dm = w.dc.dm_with(&ann);
    w.dc.say(dm, &ann, "long please");
    let parts = w.dc.wait_bot_messages(dm, 3, 30).await;
    // Let any further part arrive, then count: nothing twice.
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(parts.len() >= 3);
    let parts = w.dc.bot_messages(dm);
    assert!(parts.len() >= 3, "{} parts", parts.len());
    for p in &parts {
        let t = content(p);
        assert!(t.chars().count() <= 2000, "{} chars", t.chars().count());
        assert_eq!(t.matches("```").count() % 2, 0, "unbalanced code block in a part: {t}");
        assert_eq!(p["allowed_mentions"], json!({"parse": []}));
    }
    let all: String = parts.iter().map(content).collect::<Vec<_>>().join("\n");
    for i in 0..200 {
        assert_eq!(
            all.matches(&format!("let line_{i:03} =")).count(),
            1,
            "line {i} lost or doubled"
        );
    }
    assert!(all.ends_with("End."));
    let refused =
        w.dc.calls()
            .iter()
            .filter(|(m, p, _)| m == "POST" && p.ends_with(&format!("/channels/{dm}/messages")))
            .count();
    assert_eq!(refused, parts.len() + 2, "two posts were answered 429 and tried again");
}

/// The approval prompt in the ops room carries buttons; a press is
/// acknowledged at once; only an approver's press decides.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approval_buttons_decide_only_for_approvers() {
    let w = setup().await;
    let ann = user(11, "ann");
    w.model
        .push(Step::tool_call("memory_store", json!({"key": "k", "content": "v"})));
    w.model.push(Step::text("Stored.").when_last_contains("stored memory"));
    let dm = w.dc.dm_with(&ann);
    w.dc.say(dm, &ann, "remember it");
    let prompt = w.dc.wait_bot_messages(w.ops, 1, 20).await[0].clone();
    let buttons = prompt["components"][0]["components"].as_array().unwrap().clone();
    let labels: Vec<&str> = buttons.iter().map(|b| b["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["Allow once", "Always (this run)", "Deny"]);
    let once = buttons[0]["custom_id"].as_str().unwrap().to_string();
    let prompt_id: u64 = prompt["id"].as_str().unwrap().parse().unwrap();

    // Someone who is not an approver presses Allow: an ephemeral refusal.
    let bob = w.dc.press(&user(8, "bob"), w.ops, prompt_id, &once);
    let refusal = w.dc.wait_interaction_text(bob, 20).await;
    assert!(refusal.starts_with("discord:8 may not decide approval "), "{refusal}");
    let log = w.dc.interaction(bob);
    assert_eq!(log.callback.as_ref().unwrap()["type"], 5, "acknowledged as deferred");
    assert_eq!(log.callback.as_ref().unwrap()["data"]["flags"], 64, "only Bob sees it");
    assert_eq!(w.model.requests().len(), 1, "the tool did not run");
    assert_eq!(
        w.dc.bot_messages(w.ops)[0]["components"],
        prompt["components"],
        "the prompt is still open"
    );

    // The approver presses Allow: the prompt is edited, buttons removed.
    let ops = w.dc.press(&user(7, "ops"), w.ops, prompt_id, &once);
    let answer = w.dc.wait_interaction_text(ops, 20).await;
    assert!(answer.ends_with(": allowed once."), "{answer}");
    let reply = w.dc.wait_bot_messages(dm, 1, 20).await;
    assert_eq!(content(&reply[0]), "Stored.");
    let edited = w.dc.bot_messages(w.ops)[0].clone();
    assert!(
        content(&edited).contains("Allowed once by discord:7"),
        "{}",
        content(&edited)
    );
    assert_eq!(edited["components"], json!([]));
    // A press on the decided prompt is told so.
    let late = w.dc.press(&user(7, "ops"), w.ops, prompt_id, &once);
    let said = w.dc.wait_interaction_text(late, 20).await;
    assert!(said.contains("is no longer pending: it was approved"), "{said}");
    // Interaction tokens let their holder post as the bot: never stored
    // (inbox, outbox) nor logged.
    let data = w.sandbox.path().join("data");
    for id in [bob, ops, late] {
        let token = w.dc.token_of(id);
        assert!(token.len() > 40);
        assert!(!w.gw.log().contains(&token), "a token is logged");
        for file in ["control_plane.db", "control_plane.db-wal"] {
            let bytes = std::fs::read(data.join(file)).unwrap_or_default();
            let found = bytes.windows(token.len()).any(|w| w == token.as_bytes());
            assert!(!found, "a token is stored in {file}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subagents_list_works_as_text_and_as_an_application_command() {
    let w = setup().await;
    let ann = user(11, "ann");
    let dm = w.dc.dm_with(&ann);
    w.dc.say(dm, &ann, "/subagents list");
    let typed = w.dc.wait_bot_messages(dm, 1, 20).await;
    let names: Vec<String> =
        w.dc.commands()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_string())
            .collect();
    assert!(names.contains(&"subagents".to_string()), "{names:?}");
    let used = w.dc.slash(
        &ann,
        dm,
        "subagents",
        json!([{"name": "list", "type": 1, "options": []}]),
    );
    let answered = w.dc.wait_interaction_text(used, 20).await;
    assert_eq!(answered, content(&typed[0]), "the same answer either way");
    let log = w.dc.interaction(used);
    assert!(
        log.callback.as_ref().unwrap()["data"]["flags"].is_null(),
        "visible to the chat"
    );
    assert_eq!(w.model.requests().len(), 0, "commands never reach the model");
    assert_eq!(w.dc.command_registrations(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_announcement_lands_in_the_thread_it_was_asked_from() {
    let (model, reviewer, dc) = (
        ScriptedModel::start().await,
        ScriptedModel::start().await,
        FakeDiscord::start().await,
    );
    let ops = dc.add_channel(Kind::Text, "ops");
    let port = free_port();
    let config = support::with_reviewer(&config(&model.url(), &dc.url(), ops, port), &reviewer.url());
    let sandbox = Sandbox::new(&config);
    let _gw = Gateway::start(&sandbox, port, "probe").await;
    // Messages written before the bot's first session are not its to
    // answer (as on Discord): wait for it to be connected.
    dc.wait_sessions(1, 0, 20).await;
    model.push(Step::tool_call(
        "delegate",
        json!({"agent": "reviewer", "prompt": "check the deploy", "background": true}),
    ));
    model.push(Step::text("Started.").when_last_contains("Background task started"));
    reviewer.push(Step::text("Deploy looks fine.").delay(Duration::from_millis(200)));
    let asked = dc.say(FakeDiscord::GENERAL, &user(12, "bob"), &mention("check the deploy"));
    let sent = dc.wait_bot_messages(asked, 2, 20).await;
    assert_eq!(content(&sent[0]), "Started.");
    assert!(
        content(&sent[1])
            .starts_with("Status: success\nResult: [Agent 'reviewer' (openai/prev-model)]\nDeploy looks fine."),
        "{}",
        content(&sent[1])
    );
    assert!(dc.bot_messages(FakeDiscord::GENERAL).is_empty());
}

/// The websocket is cut mid-conversation: serenity resumes the session and
/// the gateway replays what was sent meanwhile; each message is answered
/// once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_connection_is_resumed_and_nothing_is_lost() {
    let w = setup().await;
    let ann = user(11, "ann");
    let dm = w.dc.dm_with(&ann);
    for i in 1..=3 {
        w.model
            .push(Step::text(format!("answer {i}")).when_last_contains(&format!("message {i}")));
    }
    w.dc.say(dm, &ann, "message 1");
    w.dc.wait_bot_messages(dm, 1, 20).await;
    w.dc.drop_connection();
    w.dc.say(dm, &ann, "message 2");
    w.dc.say(dm, &ann, "message 3");
    w.dc.wait_sessions(1, 1, 30).await;
    // Messages 2 and 3 arrive together after the resume: one turn answers
    // both (or, if 2 was answered before 3 came, a turn each).
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !w.dc.bot_messages(dm).iter().any(|m| content(m) == "answer 3") {
        assert!(std::time::Instant::now() < deadline, "message 3 was never answered");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let answers = w.dc.bot_messages(dm);
    let texts: Vec<&str> = answers.iter().map(content).collect();
    assert!(
        texts == ["answer 1", "answer 3"] || texts == ["answer 1", "answer 2", "answer 3"],
        "nothing lost, nothing twice: {texts:?}"
    );
    let asked: Vec<String> = w.model.requests().last().unwrap()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(asked, ["message 1", "message 2", "message 3"]);
    assert_eq!(w.dc.sessions().0, 1, "resumed, not identified again");
}

/// Discord ends the session (INVALID_SESSION) and the events meanwhile are
/// gone: serenity identifies again and the adapter reads the channel back
/// from its last seen message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_an_invalid_session_what_was_missed_is_read_back() {
    let w = setup().await;
    let ann = user(11, "ann");
    w.model
        .push(Step::text("in thread one").when_last_contains("thread one"));
    w.model
        .push(Step::text("missed one answered").when_last_contains("while away"));
    let asked = w.dc.say(FakeDiscord::GENERAL, &ann, &mention("thread one"));
    w.dc.wait_bot_messages(asked, 1, 20).await;
    w.dc.lose_events(true);
    w.dc.say(asked, &ann, "written while away");
    w.dc.say(FakeDiscord::GENERAL, &ann, "not for the bot");
    w.dc.invalidate_session();
    w.dc.lose_events(false);
    w.dc.wait_sessions(2, 0, 30).await;
    let answers = w.dc.wait_bot_messages(asked, 2, 30).await;
    assert_eq!(content(&answers[1]), "missed one answered");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(w.dc.bot_messages(asked).len(), 2, "nothing twice");
    assert_eq!(w.model.requests().len(), 2, "the unmentioned message was not answered");
}

/// The gateway process stops; a message written meanwhile is answered once
/// after the restart, and the unchanged commands are not registered again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_answers_what_was_written_meanwhile_once_without_registering_again() {
    let mut w = setup().await;
    let ann = user(11, "ann");
    let dm = w.dc.dm_with(&ann);
    w.model.push(Step::text("first answer").when_last_contains("first"));
    w.dc.say(dm, &ann, "first");
    w.dc.wait_bot_messages(dm, 1, 20).await;
    assert_eq!(w.dc.command_registrations(), 1);
    w.gw.kill();
    w.dc.say(dm, &ann, "second");
    w.model.push(Step::text("second answer").when_last_contains("second"));
    let _gw = Gateway::start(&w.sandbox, w.port, "probe").await;
    let answers = w.dc.wait_bot_messages(dm, 2, 30).await;
    assert_eq!(content(&answers[1]), "second answer");
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(w.dc.bot_messages(dm).len(), 2, "nothing answered twice");
    assert_eq!(w.model.requests().len(), 2);
    assert_eq!(w.dc.sessions().0, 2, "the new process identified");
    assert_eq!(
        w.dc.command_registrations(),
        1,
        "an unchanged command set is not registered again"
    );
}

/// Discord refuses the privileged intent: the log says what to enable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_message_content_intent_is_explained_in_the_log() {
    let model = ScriptedModel::start().await;
    let dc = FakeDiscord::start().await;
    dc.deny_message_content(true);
    let port = free_port();
    // The gateway URL can be given instead of asked for.
    let config = config(&model.url(), &dc.url(), 1, port).replace(
        "api_url =",
        &format!("gateway_url = \"{}\"\napi_url =", dc.gateway_url()),
    );
    let sandbox = Sandbox::new(&config);
    let gw = Gateway::start(&sandbox, port, "probe").await;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !gw.log().contains("Message Content Intent") {
        assert!(
            std::time::Instant::now() < deadline,
            "no explanation in the log:\n{}",
            gw.log()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(gw.log().contains("4014"), "{}", gw.log());
}

/// A part refused by a server error is delivered again later from the
/// outbox; the parts already posted are not posted twice (each carries
/// its nonce, which Discord enforces).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_whose_second_part_fails_is_completed_without_reposting_the_first() {
    let w = setup().await;
    let ann = user(11, "ann");
    let long = (0..120)
        .map(|i| format!("Sentence number {i:03} of a long answer.\n"))
        .collect::<String>();
    assert!(long.chars().count() > 4000);
    w.model.push(Step::text(long));
    w.dc.fail_posts(1, 6);
    let dm = w.dc.dm_with(&ann);
    w.dc.say(dm, &ann, "tell me everything");
    w.dc.wait_bot_messages(dm, 3, 40).await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    let parts = w.dc.bot_messages(dm);
    let all: String = parts.iter().map(content).collect::<Vec<_>>().join("\n");
    for i in 0..120 {
        assert_eq!(
            all.matches(&format!("number {i:03} ")).count(),
            1,
            "sentence {i} lost or doubled"
        );
    }
    let first_posts =
        w.dc.calls()
            .iter()
            .filter(|(m, p, b)| {
                m == "POST" && p.ends_with(&format!("/channels/{dm}/messages")) && b["content"] == parts[0]["content"]
            })
            .count();
    assert!(
        first_posts >= 2,
        "the first part was sent again ({first_posts}) and Discord kept one"
    );
}

/// In a forum, the post's own thread is the conversation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forum_post_is_its_own_conversation() {
    let w = setup().await;
    let ann = user(11, "ann");
    let forum = w.dc.add_channel(Kind::Forum, "help");
    w.model.push(Step::text("Forum answer.").when_last_contains("how do I"));
    w.model
        .push(Step::text("Forum follow-up.").when_last_contains("thanks"));
    let (post, _) = w.dc.forum_post(forum, &ann, "Question", &mention("how do I deploy?"));
    let answers = w.dc.wait_bot_messages(post, 1, 20).await;
    assert_eq!(content(&answers[0]), "Forum answer.");
    assert_eq!(w.dc.threads_of(forum), [post], "no other thread was started");
    w.dc.say(post, &ann, "thanks, and then?");
    let answers = w.dc.wait_bot_messages(post, 2, 20).await;
    assert_eq!(
        content(&answers[1]),
        "Forum follow-up.",
        "the bot answers in the post without a mention"
    );
}
