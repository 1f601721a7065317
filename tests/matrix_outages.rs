//! The Matrix adapter when things go wrong: restarts, a homeserver that is
//! down or rate limits, a crash mid-turn, a reply sent twice — against a
//! real Synapse, through the real `switchboard run`.

mod matrix_fx;
mod support;

use matrix_fx::*;
use serde_json::json;
use std::time::Duration;
use support::{Gateway, Sandbox, free_port, matrix_config};
use switchboard_test_support::synapse::{Synapse, body, thread_of};
use switchboard_test_support::{ScriptedModel, Step};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_restart_old_messages_are_not_answered_again() {
    let model = ScriptedModel::start().await;
    let w = world().await;
    let port = free_port();
    let sandbox = Sandbox::new(&config(&model.url(), &w, port));
    let mut gw = Gateway::start(&sandbox, port, "probe").await;
    model.push(Step::text("first answer").when_last_contains("first"));
    w.ann.say(&w.dm, "first").await;
    w.ann.wait_for(&w.dm, BOT, 30, |m| body(m) == "first answer").await;
    gw.kill();
    // Written while the gateway is down: answered after the restart, once.
    w.ann.say(&w.dm, "second").await;
    model.push(Step::text("second answer").when_last_contains("second"));
    let _gw = Gateway::start(&sandbox, port, "probe").await;
    w.ann.wait_for(&w.dm, BOT, 30, |m| body(m) == "second answer").await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let said: Vec<String> = w
        .ann
        .messages_from(&w.dm, BOT)
        .await
        .iter()
        .map(|m| body(m).to_string())
        .collect();
    assert_eq!(said, ["first answer", "second answer"], "nothing answered twice");
    assert_eq!(model.requests().len(), 2);
    let log = std::fs::read_dir(sandbox.path().join("data/matrix/main"))
        .unwrap()
        .count();
    assert!(log > 0, "the SDK keeps its store under the data directory");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_is_lost_while_the_homeserver_is_down_for_ten_seconds() {
    let (model, reviewer) = (ScriptedModel::start().await, ScriptedModel::start().await);
    let mut w = world().await;
    let port = free_port();
    let config = delegating_config(&model, &reviewer, &w, port);
    let sandbox = Sandbox::new(&config);
    let gw = Gateway::start(&sandbox, port, "probe").await;
    model.push(Step::tool_call(
        "delegate",
        json!({"agent": "reviewer", "prompt": "check the deploy", "background": true}),
    ));
    // Both the reply and the background result are ready while the
    // homeserver is down.
    model.push(
        Step::text("Started, results follow.")
            .when_last_contains("Background task started")
            .delay(Duration::from_secs(3)),
    );
    reviewer.push(Step::text("Deploy looks fine.").delay(Duration::from_secs(2)));
    let question = w.bob.mention(&w.group, BOT, "bot: check the deploy").await;
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while reviewer.requests().is_empty() {
        assert!(std::time::Instant::now() < deadline, "the delegate never started");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    w.synapse.stop();
    tokio::time::sleep(Duration::from_secs(10)).await;
    w.synapse.resume().await;

    let announced = w
        .bob
        .wait_for(&w.group, BOT, 90, |m| body(m).starts_with("Status: success"))
        .await;
    assert_eq!(thread_of(&announced), Some(question.as_str()));
    let reply = tokio::time::timeout(
        Duration::from_secs(60),
        w.bob
            .wait_for(&w.group, BOT, 90, |m| body(m) == "Started, results follow."),
    )
    .await;
    let reply = reply.unwrap_or_else(|_| panic!("no reply; gateway log:\n{}", gw.log()));
    assert_eq!(thread_of(&reply), Some(question.as_str()));
    tokio::time::sleep(Duration::from_secs(2)).await;
    let said: Vec<String> = w
        .bob
        .messages_from(&w.group, BOT)
        .await
        .iter()
        .map(|m| body(m).lines().next().unwrap_or("").to_string())
        .collect();
    assert_eq!(said.len(), 2, "each exactly once: {said:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limits_and_an_outage_mid_reply_lose_and_repeat_nothing() {
    use switchboard_test_support::synapse::MessageRate;
    let model = ScriptedModel::start().await;
    let mut synapse = Synapse::start_with(Some(MessageRate {
        per_second: 0.5,
        burst: 2,
    }))
    .await;
    synapse.register("bot", "bot-password").await;
    let ann = synapse.register("ann", "pw-ann").await;
    let dm = ann.create_room("", &[BOT], true).await;
    let port = free_port();
    // The plain multi-part send is under test here (a streamed answer is
    // split in its own, smaller parts).
    let config = matrix_config(&model.url(), &synapse.url(), &[&dm], port, "streaming = \"off\"");
    let sandbox = Sandbox::new(&config);
    let gw = Gateway::start(&sandbox, port, "probe").await;
    let parts: Vec<String> = (0..5).map(|i| format!("part {i} ").repeat(3000)).collect();
    model.push(Step::text(parts.join("\n\n")));
    ann.say(&dm, "five parts please").await;
    // The first part is out; the homeserver goes away for 10 s while the
    // rest waits on the rate limit.
    ann.wait_for(&dm, BOT, 60, |m| body(m).starts_with("part 0")).await;
    synapse.stop();
    tokio::time::sleep(Duration::from_secs(10)).await;
    synapse.resume().await;
    ann.wait_for(&dm, BOT, 90, |m| body(m).starts_with("part 4")).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let said: Vec<String> = ann
        .messages_from(&dm, BOT)
        .await
        .iter()
        .map(|m| body(m)[..6].to_string())
        .collect();
    assert_eq!(
        said,
        ["part 0", "part 1", "part 2", "part 3", "part 4"],
        "in order, once each"
    );
    assert!(
        gw.log().contains("resuming a message that failed part-way"),
        "the retry resumed after the parts already posted"
    );
    assert!(
        synapse.log().contains(" 429 \"PUT /_matrix/client/v3/rooms/"),
        "the homeserver did rate-limit the bot"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_started_while_the_homeserver_is_down_connects_when_it_is_back() {
    let model = ScriptedModel::start().await;
    let mut w = world().await;
    let port = free_port();
    let sandbox = Sandbox::new(&config(&model.url(), &w, port));
    w.synapse.stop();
    // The other channels (here the local probe) come up regardless.
    let gw = Gateway::start(&sandbox, port, "probe").await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(
        gw.log()
            .contains("the homeserver cannot be reached; retrying in the background"),
        "{}",
        gw.log()
    );
    w.synapse.resume().await;
    model.push(Step::text("Back online.").when_last_contains("are you there"));
    // Joined and syncing once the homeserver answers; then answered.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !gw.log().contains("connected to the homeserver") {
        assert!(std::time::Instant::now() < deadline, "{}", gw.log());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    w.ann.say(&w.dm, "are you there?").await;
    w.ann.wait_for(&w.dm, BOT, 30, |m| body(m) == "Back online.").await;
}

/// A message taken from a sync whose turn a SIGKILL cut short is answered
/// once after the restart, in its thread (the sync token moved with it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_taken_before_a_crash_is_answered_once_after_restart() {
    let (model, w, sandbox, mut gw, port) = setup().await;
    model.push(Step::text("too late").delay(Duration::from_secs(30)));
    let question = w.ann.mention(&w.group, BOT, "bot: status after the crash?").await;
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while model.requests().is_empty() {
        assert!(std::time::Instant::now() < deadline, "the model was never asked");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    gw.kill();
    model.push(Step::text("All good after the restart."));
    let _gw = Gateway::start(&sandbox, port, "probe").await;
    let answer = w
        .ann
        .wait_for(&w.group, BOT, 30, |m| body(m) == "All good after the restart.")
        .await;
    assert_eq!(thread_of(&answer), Some(question.as_str()));
    tokio::time::sleep(Duration::from_secs(2)).await;
    let answers = w.ann.messages_from(&w.group, BOT).await;
    assert_eq!(answers.len(), 1, "answered once: {answers:#?}");
    assert_eq!(model.requests().len(), 2);
}

/// An intake that takes everything (the adapter is driven directly here).
struct TakeAll;

#[async_trait::async_trait]
impl switchboard_core::Intake for TakeAll {
    async fn cursor(&self, _: &str) -> Result<Option<String>, switchboard_core::IntakeError> {
        Ok(None)
    }
    async fn take(
        &self,
        _: &str,
        _: Vec<switchboard_core::Inbound>,
        _: Option<String>,
    ) -> Result<(), switchboard_core::IntakeError> {
        Ok(())
    }
}

/// A reply sent again after a crash carries the same delivery key, so its
/// parts reuse their transaction ids and the homeserver keeps one copy; a
/// message without a key sent twice lands twice (the check can fail).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keyed_delivery_sent_twice_lands_once() {
    use switchboard_channel_matrix::{Auth, MatrixChannel, Settings};
    use switchboard_core::{Channel, ChatAddress, Outbound};
    let synapse = Synapse::start().await;
    synapse.register("bot", "bot-password").await;
    let ann = synapse.register("ann", "pw-ann").await;
    let room = ann.create_room("team", &[BOT], false).await;
    let store = tempfile::tempdir().unwrap();
    let channel = MatrixChannel::new(Settings {
        name: "matrix.main".into(),
        homeserver: synapse.url(),
        user_id: BOT.into(),
        auth: Auth::Password("bot-password".into()),
        store_dir: store.path().join("sdk"),
        store_passphrase: None,
        auto_join: vec![room.clone()],
        invites_from: Vec::new(),
        sync_timeout: Duration::from_secs(1),
    })
    .unwrap();
    channel.start(std::sync::Arc::new(TakeAll)).await.unwrap();
    let address = ChatAddress::new("matrix.main", room.clone());
    let mut keyed = Outbound::new(address.clone(), "answered once");
    keyed.delivery_key = Some("reply:k1".into());
    let first = channel.send(&keyed).await.unwrap();
    let again = channel.send(&keyed).await.unwrap();
    assert_eq!(first, again, "the homeserver recognised the repeat");
    let plain = Outbound::new(address, "sent twice");
    channel.send(&plain).await.unwrap();
    channel.send(&plain).await.unwrap();
    let bodies: Vec<String> = ann
        .messages_from(&room, BOT)
        .await
        .iter()
        .map(|m| body(m).to_string())
        .collect();
    assert_eq!(bodies, ["answered once", "sent twice", "sent twice"]);
}
