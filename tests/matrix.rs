//! The Matrix adapter through the real `switchboard run`, against a real
//! Synapse homeserver on loopback: people register, create rooms, write,
//! react and read what the bot posted, all over the client-server API.

mod matrix_fx;
mod support;

use matrix_fx::*;
use serde_json::json;
use std::time::Duration;
use support::{Gateway, Sandbox, free_port};
use switchboard_test_support::synapse::{body, thread_of};
use switchboard_test_support::{ScriptedModel, Step};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mentions_are_answered_in_threads_and_dms_always() {
    let (model, w, _sandbox, _gw, _) = setup().await;
    model.push(Step::text("Deploy is **green**.").when_last_contains("deploy status"));
    model.push(Step::text("Still green.").when_last_contains("and now"));
    model.push(Step::text("Hi Ann.").when_last_contains("hello in private"));

    // Not mentioned in a group room: ignored.
    w.ann.say(&w.group, "just chatting").await;
    // Mentioned: answered in a thread under the question.
    let question = w.ann.mention(&w.group, BOT, "bot: deploy status?").await;
    let answer = w
        .ann
        .wait_for(&w.group, BOT, 30, |m| body(m) == "Deploy is **green**.")
        .await;
    assert_eq!(thread_of(&answer), Some(question.as_str()), "{answer}");
    assert!(
        answer["content"]["formatted_body"]
            .as_str()
            .unwrap()
            .contains("<strong>green</strong>")
    );
    // Inside that thread the bot follows without being named again, and
    // it is the same conversation.
    w.ann.say_in_thread(&w.group, &question, "and now?").await;
    let follow = w.ann.wait_for(&w.group, BOT, 30, |m| body(m) == "Still green.").await;
    assert_eq!(thread_of(&follow), Some(question.as_str()));
    let second = &model.requests()[1];
    assert!(
        second.to_string().contains("deploy status"),
        "the thread keeps its history"
    );

    // A DM is answered without a mention, outside any thread.
    w.ann.say(&w.dm, "hello in private").await;
    let dm = w.ann.wait_for(&w.dm, BOT, 30, |m| body(m) == "Hi Ann.").await;
    assert_eq!(thread_of(&dm), None);
    assert_eq!(
        model.requests().len(),
        3,
        "the unmentioned message never reached the model"
    );
    let said: Vec<String> = w
        .ann
        .messages_from(&w.group, BOT)
        .await
        .iter()
        .map(|m| body(m).to_string())
        .collect();
    assert_eq!(said, ["Deploy is **green**.", "Still green."]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_reply_is_split_and_every_part_renders() {
    let (model, w, _sandbox, _gw, _) = setup().await;
    let long = format!(
        "# Report\n```\n{}```\nEnd of **report**.",
        "log line with <angle> & ampersand, padded to be long enough\n".repeat(1500)
    );
    assert!(long.len() > 80_000);
    model.push(Step::text(long));
    w.ann.say(&w.dm, "the full log please").await;
    w.ann
        .wait_for(&w.dm, BOT, 30, |m| body(m).ends_with("End of **report**."))
        .await;
    let parts = w.ann.messages_from(&w.dm, BOT).await;
    assert!(parts.len() >= 3, "{} parts", parts.len());
    let mut lines = 0;
    for p in &parts {
        let b = body(p);
        assert!(b.len() <= 32 * 1024, "a body of {} bytes", b.len());
        let html = p["content"]["formatted_body"].as_str().expect("every part has HTML");
        assert_eq!(
            html.matches("<pre>").count(),
            html.matches("</pre>").count(),
            "unbalanced <pre>"
        );
        assert!(!html.contains("<angle>"), "unescaped HTML");
        lines += b.matches("log line with <angle>").count();
    }
    assert_eq!(lines, 1500, "no line lost");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_by_reaction_count_only_for_approvers() {
    let (model, w, _sandbox, _gw, _) = setup().await;
    model.push(Step::tool_call("memory_store", json!({"key": "k", "content": "v"})));
    model.push(Step::text("Stored.").when_last_contains("stored memory"));
    w.ann.say(&w.dm, "remember it").await;
    let prompt =
        w.op.wait_for(&w.ops, BOT, 30, |m| body(m).starts_with("Approval needed"))
            .await;
    let prompt_id = prompt["event_id"].as_str().unwrap().to_string();
    assert!(body(&prompt).contains("tool: memory_store"), "{}", body(&prompt));
    // The bot offers the three choices as reactions.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let keys: Vec<String> =
            w.op.events(&w.ops)
                .await
                .iter()
                .filter(|e| e["type"] == "m.reaction" && e["content"]["m.relates_to"]["event_id"] == prompt_id.as_str())
                .map(|e| e["content"]["m.relates_to"]["key"].as_str().unwrap().to_string())
                .collect();
        if keys.len() == 3 {
            assert_eq!(keys, ["✅", "♾️", "❌"]);
            break;
        }
        assert!(std::time::Instant::now() < deadline, "reactions offered: {keys:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // Bob is in the ops room but not an approver: his ✅ is refused.
    w.bob.react(&w.ops, &prompt_id, "✅").await;
    let refusal =
        w.op.wait_for(&w.ops, BOT, 30, |m| {
            body(m).starts_with("@bob:localhost may not decide")
        })
        .await;
    assert!(
        body(&refusal).ends_with("The request stays open."),
        "{}",
        body(&refusal)
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(model.requests().len(), 1, "the tool did not run");

    // The operator's ✅ runs it; the prompt is edited to say so.
    w.op.react(&w.ops, &prompt_id, "✅").await;
    w.ann.wait_for(&w.dm, BOT, 30, |m| body(m) == "Stored.").await;
    let edit =
        w.op.wait_for(&w.ops, BOT, 30, |m| {
            m["content"]["m.relates_to"]["rel_type"] == "m.replace"
        })
        .await;
    assert_eq!(edit["content"]["m.relates_to"]["event_id"], prompt_id.as_str());
    let new_body = edit["content"]["m.new_content"]["body"].as_str().unwrap();
    assert!(new_body.contains(&format!("Allowed once by {OP}")), "{new_body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_announcement_lands_in_the_thread_and_subagents_list_works() {
    let (model, reviewer) = (ScriptedModel::start().await, ScriptedModel::start().await);
    let w = world().await;
    let port = free_port();
    let config = delegating_config(&model, &reviewer, &w, port);
    let sandbox = Sandbox::new(&config);
    let _gw = Gateway::start(&sandbox, port, "probe").await;
    model.push(Step::tool_call(
        "delegate",
        json!({"agent": "reviewer", "prompt": "check the deploy", "background": true}),
    ));
    model.push(Step::text("Started.").when_last_contains("Background task started"));
    reviewer.push(Step::text("Deploy looks fine.").delay(Duration::from_millis(300)));
    let question = w.bob.mention(&w.group, BOT, "bot: check the deploy").await;
    let announced = w
        .bob
        .wait_for(&w.group, BOT, 30, |m| body(m).starts_with("Status: success"))
        .await;
    assert!(
        body(&announced)
            .starts_with("Status: success\nResult: [Agent 'reviewer' (openai/prev-model)]\nDeploy looks fine."),
        "{}",
        body(&announced)
    );
    assert_eq!(
        thread_of(&announced),
        Some(question.as_str()),
        "the announcement lands in the thread the work was asked for in"
    );
    let started = w.bob.wait_for(&w.group, BOT, 30, |m| body(m) == "Started.").await;
    assert_eq!(thread_of(&started), Some(question.as_str()));

    // /subagents list from that thread answers there and shows the task.
    w.bob.say_in_thread(&w.group, &question, "/subagents list").await;
    let list = w
        .bob
        .wait_for(&w.group, BOT, 30, |m| body(m).starts_with("Subagents of this chat"))
        .await;
    assert_eq!(thread_of(&list), Some(question.as_str()));
    assert!(
        body(&list).contains("reviewer") && body(&list).contains("completed"),
        "{}",
        body(&list)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invitations_are_accepted_only_from_allowed_people() {
    let model = ScriptedModel::start().await;
    let w = world().await;
    let eve = w.synapse.register("eve", "pw-eve").await;
    let port = free_port();
    let config = config(&model.url(), &w, port).replace(
        "allowed_users = [\"*\"]\nrooms",
        &format!(
            "allowed_users = [\"{}\", \"{}\", \"{OP}\"]\njoin_on_invite = true\nrooms",
            w.ann.user_id, w.bob.user_id
        ),
    );
    assert!(config.contains("join_on_invite = true"));
    let sandbox = Sandbox::new(&config);
    let _gw = Gateway::start(&sandbox, port, "probe").await;
    let from_eve = eve.create_room("eve's room", &[BOT], false).await;
    let from_bob = w.bob.create_room("bob's room", &[BOT], false).await;
    model.push(Step::text("Joined and listening.").when_last_contains("welcome"));
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let joined = |events: &[serde_json::Value]| {
        events
            .iter()
            .any(|e| e["type"] == "m.room.member" && e["state_key"] == BOT && e["content"]["membership"] == "join")
    };
    while !joined(&w.bob.events(&from_bob).await) {
        assert!(
            std::time::Instant::now() < deadline,
            "the bot did not accept Bob's invitation"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    w.bob.mention(&from_bob, BOT, "bot: welcome!").await;
    let answer = w
        .bob
        .wait_for(&from_bob, BOT, 30, |m| body(m) == "Joined and listening.")
        .await;
    assert_eq!(
        thread_of(&answer),
        None,
        "a room of two people is a direct conversation"
    );
    assert!(!joined(&eve.events(&from_eve).await), "Eve is not in allowed_users");
    // A room of three marked "direct" by its inviter is still a group room:
    // a message without a mention is not answered, a mention gets a thread.
    let crowd = w.bob.create_room("bob's crowd", &[BOT, &w.ann.user_id], true).await;
    w.ann.join(&crowd).await;
    while !joined(&w.bob.events(&crowd).await) {
        assert!(std::time::Instant::now() < deadline, "the bot did not join the crowd");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    w.bob.say(&crowd, "anyone there?").await;
    model.push(Step::text("In the crowd.").when_last_contains("crowd check"));
    w.bob.mention(&crowd, BOT, "bot: crowd check").await;
    let answer = w.bob.wait_for(&crowd, BOT, 30, |m| body(m) == "In the crowd.").await;
    assert!(thread_of(&answer).is_some(), "a group room's answer is threaded");
    let asked = model.requests().iter().map(ToString::to_string).collect::<String>();
    assert!(!asked.contains("anyone there?"), "not answered without a mention");
}

/// Idle `/sync` long polls on a real Synapse are successes: with a 2 s sync
/// timeout and 15 s of quiet, nothing is logged as a failure and the next
/// message is answered as fast as on a busy bot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_bot_answers_its_next_message_at_once() {
    let model = ScriptedModel::start().await;
    let w = world().await;
    let port = free_port();
    let config = config(&model.url(), &w, port).replace(
        "[channels.matrix.main]\n",
        "[channels.matrix.main]\nsync_timeout_secs = 2\n",
    );
    let sandbox = Sandbox::new(&config);
    let gw = Gateway::start(&sandbox, port, "probe").await;
    // Let it join and settle, then stay quiet.
    tokio::time::sleep(Duration::from_secs(15)).await;
    model.push(Step::text("Still here.").when_last_contains("after a while"));
    let sent_at = std::time::Instant::now();
    w.ann.say(&w.dm, "hello after a while").await;
    w.ann.wait_for(&w.dm, BOT, 30, |m| body(m) == "Still here.").await;
    let waited = sent_at.elapsed();
    assert!(waited < Duration::from_secs(5), "answered after {waited:?}");
    let log = gw.log();
    assert!(
        !log.contains("sync failed"),
        "idle syncs were logged as failures:\n{log}"
    );
}
