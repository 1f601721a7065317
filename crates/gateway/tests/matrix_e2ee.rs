//! End-to-end encryption: a person with a real encrypting client (matrix-sdk)
//! writes to the bot in an encrypted room; the bot reads it and answers
//! encrypted, and the homeserver only ever sees ciphertext.

mod support;

use matrix_sdk::Client;
use matrix_sdk::config::SyncSettings;
use matrix_sdk::ruma::OwnedRoomId;
use matrix_sdk::ruma::events::room::message::RoomMessageEventContent;
use serde_json::Value;
use std::time::{Duration, Instant};
use support::{Gateway, Sandbox, free_port, matrix_config};
use switchboard_test_support::synapse::Synapse;
use switchboard_test_support::{ScriptedModel, Step};

const BOT: &str = "@bot:localhost";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_encrypted_room_is_read_and_answered_encrypted() {
    let model = ScriptedModel::start().await;
    let synapse = Synapse::start().await;
    synapse.register("bot", "bot-password").await;
    let ann_http = synapse.register("ann", "pw-ann").await;
    let room = ann_http.create_encrypted_room("secret", &[BOT]).await;
    let port = free_port();
    let config = matrix_config(
        &model.url(),
        &synapse.url(),
        &[&room],
        port,
        "require_mention_in_groups = false",
    );
    let sandbox = Sandbox::new(&config);
    let _gw = Gateway::start(&sandbox, port, "probe").await;
    model.push(Step::text("Secret answer.").when_last_contains("the launch code"));

    // Ann's encrypting client (its own device), in a memory store.
    let ann = Client::builder().homeserver_url(synapse.url()).build().await.unwrap();
    ann.matrix_auth().login_username("ann", "pw-ann").send().await.unwrap();
    let room_id: OwnedRoomId = room.as_str().try_into().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let bot_joined = ann_http
            .events(&room)
            .await
            .iter()
            .any(|e| e["type"] == "m.room.member" && e["state_key"] == BOT && e["content"]["membership"] == "join");
        if bot_joined {
            break;
        }
        assert!(Instant::now() < deadline, "the bot never joined the encrypted room");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    ann.sync_once(SyncSettings::default().timeout(Duration::ZERO))
        .await
        .unwrap();
    let joined = ann.get_room(&room_id).expect("Ann is in the room");
    assert!(joined.latest_encryption_state().await.unwrap().is_encrypted());
    joined
        .send(RoomMessageEventContent::text_plain("what is the launch code?"))
        .await
        .unwrap();

    // Ann's client receives the answer and decrypts it.
    let deadline = Instant::now() + Duration::from_secs(40);
    'wait: loop {
        let response = ann
            .sync_once(SyncSettings::default().timeout(Duration::from_millis(500)))
            .await
            .unwrap();
        if let Some(update) = response.rooms.joined.get(&room_id) {
            for ev in &update.timeline.events {
                let json: Value = serde_json::from_str(ev.raw().json().get()).unwrap();
                if json["sender"] == BOT && json["content"]["body"] == "Secret answer." {
                    assert!(ev.encryption_info().is_some(), "the answer arrived encrypted");
                    break 'wait;
                }
            }
        }
        assert!(Instant::now() < deadline, "no decryptable answer from the bot");
    }
    // What the homeserver stored: ciphertext only, both ways.
    let stored = ann_http.events(&room).await;
    let messages: Vec<&Value> = stored
        .iter()
        .filter(|e| e["type"] == "m.room.message" || e["type"] == "m.room.encrypted")
        .collect();
    assert!(messages.len() >= 2);
    assert!(
        messages.iter().all(|e| e["type"] == "m.room.encrypted"),
        "{messages:#?}"
    );
    assert_eq!(model.requests().len(), 1);
    assert!(
        model.requests()[0].to_string().contains("what is the launch code?"),
        "the model got the decrypted text"
    );
}
