//! A person with a real encrypting Matrix client (matrix-sdk, its own
//! device, a memory store) in an encrypted room the bot joins.

use matrix_sdk::Client;
use matrix_sdk::config::SyncSettings;
use matrix_sdk::ruma::OwnedRoomId;
use serde_json::Value;
use std::time::{Duration, Instant};
use switchboard_test_support::synapse::{Person, Synapse};

/// The bot's account in these tests.
const BOT: &str = "@bot:localhost";

/// A homeserver with the bot's account (`bot` / `bot-password`) and Ann's
/// (`ann` / `pw-ann`), and an encrypted group room Ann made inviting the
/// bot: the server, Ann over plain HTTP, the room id.
pub(crate) async fn encrypted_room() -> (Synapse, Person, String) {
    let synapse = Synapse::start().await;
    synapse.register("bot", "bot-password").await;
    let ann = synapse.register("ann", "pw-ann").await;
    let room = ann.create_encrypted_room("secret", &[BOT]).await;
    (synapse, ann, room)
}

/// Sign `(user, password)` in with an encrypting client once the bot has
/// joined `room` (read through `http`, the same person over plain HTTP);
/// the client and the room, whose encryption it has checked.
pub(crate) async fn encrypting_client(
    synapse: &Synapse,
    http: &Person,
    (user, password): (&str, &str),
    room: &str,
) -> (Client, matrix_sdk::Room) {
    let client = Client::builder().homeserver_url(synapse.url()).build().await.unwrap();
    client
        .matrix_auth()
        .login_username(user, password)
        .send()
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !http
        .events(room)
        .await
        .iter()
        .any(|e| e["type"] == "m.room.member" && e["state_key"] == BOT && e["content"]["membership"] == "join")
    {
        assert!(Instant::now() < deadline, "the bot never joined the encrypted room");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    client
        .sync_once(SyncSettings::default().timeout(Duration::ZERO))
        .await
        .unwrap();
    let room_id: OwnedRoomId = room.try_into().unwrap();
    let joined = client.get_room(&room_id).expect("the person is in the room");
    assert!(joined.latest_encryption_state().await.unwrap().is_encrypted());
    (client, joined)
}

/// Sync until the bot posts, in `room`, an event whose decrypted JSON
/// matches `pred`; that JSON, after checking it arrived encrypted.
pub(crate) async fn next_from_bot(
    client: &Client,
    room: &matrix_sdk::Room,
    secs: u64,
    pred: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let response = client
            .sync_once(SyncSettings::default().timeout(Duration::from_millis(500)))
            .await
            .unwrap();
        if let Some(update) = response.rooms.joined.get(room.room_id()) {
            for ev in &update.timeline.events {
                let json: Value = serde_json::from_str(ev.raw().json().get()).unwrap();
                if json["sender"] == BOT && pred(&json) {
                    assert!(ev.encryption_info().is_some(), "the bot's event arrived encrypted");
                    return json;
                }
            }
        }
        assert!(
            Instant::now() < deadline,
            "no matching event from the bot within {secs}s"
        );
    }
}
