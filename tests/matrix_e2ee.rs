//! End-to-end encryption: a person with a real encrypting client (matrix-sdk)
//! writes to the bot in an encrypted room; the bot reads it and answers
//! encrypted, and the homeserver only ever sees ciphertext.

mod support;

use matrix_sdk::ruma::events::room::message::RoomMessageEventContent;
use serde_json::Value;
use support::{Gateway, Sandbox, free_port, matrix_config};
use switchboard_test_support::{ScriptedModel, Step};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_encrypted_room_is_read_and_answered_encrypted() {
    let model = ScriptedModel::start().await;
    let (synapse, ann_http, room) = support::e2ee::encrypted_room().await;
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
    let (ann, joined) = support::e2ee::encrypting_client(&synapse, &ann_http, ("ann", "pw-ann"), &room).await;
    joined
        .send(RoomMessageEventContent::text_plain("what is the launch code?"))
        .await
        .unwrap();
    // Ann's client receives the answer and decrypts it.
    support::e2ee::next_from_bot(&ann, &joined, 40, |e| e["content"]["body"] == "Secret answer.").await;
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
