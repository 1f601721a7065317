//! Files on Matrix through the real `switchboard run` and a real Synapse:
//! a person's `m.image` with a caption reaches a vision agent as an image
//! plus the caption, and `send_file` answers with an `m.file` in the
//! conversation's thread; in an encrypted room the picture is decrypted
//! for the model and the bot's file goes up encrypted, readable by the
//! person's own client while the homeserver sees only ciphertext.

mod support;

use base64::Engine;
use matrix_sdk::attachment::AttachmentConfig;
use matrix_sdk::media::{MediaFormat, MediaRequestParameters};
use matrix_sdk::ruma::events::room::MediaSource;
use matrix_sdk::ruma::events::room::message::TextMessageEventContent;
use serde_json::{Value, json};
use support::{Gateway, Sandbox, free_port, matrix_config};
use switchboard_test_support::synapse::{Synapse, body, thread_of};
use switchboard_test_support::{ScriptedModel, Step};

const BOT: &str = "@bot:localhost";

fn png() -> Vec<u8> {
    let mut data = b"\x89PNG\r\n\x1a\n".to_vec();
    data.extend((0..3000u32).map(|i| (i * 13 % 251) as u8));
    data
}

/// The gateway on Synapse with `main` (vision, tools unguarded) in `rooms`.
fn sandbox(model: &ScriptedModel, synapse: &Synapse, rooms: &[&str], port: u16, extra: &str) -> Sandbox {
    let config = matrix_config(&model.url(), &synapse.url(), rooms, port, extra);
    let config = config.replacen(
        "[agents.main]\n",
        "[risk_profiles.default]\nlevel = \"full\"\n[agents.main]\nvision = true\n",
        1,
    );
    Sandbox::new(&config)
}

/// The image part of the last message of `request`, as a data URL.
fn image_of(request: &Value) -> (String, String) {
    let last = request["messages"].as_array().unwrap().last().unwrap();
    let parts = last["content"].as_array().expect("text and image parts");
    (
        parts[0]["text"].as_str().unwrap().to_string(),
        parts[1]["image_url"]["url"].as_str().unwrap().to_string(),
    )
}

fn data_url(data: &[u8]) -> String {
    format!(
        "data:image/png;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(data)
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_with_a_caption_is_seen_and_send_file_answers_in_the_thread() {
    let model = ScriptedModel::start().await;
    let synapse = Synapse::start().await;
    synapse.register("bot", "bot-password").await;
    let ann = synapse.register("ann", "pw-ann").await;
    let cy = synapse.register("cy", "pw-cy").await;
    // Three members: a group room, where every conversation is a thread.
    let room = ann.create_room("team", &[BOT, "@cy:localhost"], false).await;
    cy.join(&room).await;
    let port = free_port();
    let sandbox = sandbox(&model, &synapse, &[room.as_str()], port, "streaming = \"off\"");
    let _gw = Gateway::start(&sandbox, port, "probe").await;
    let notes = b"deploy: build, test, ship\n".to_vec();
    std::fs::write(sandbox.path().join("workspace/main/notes.md"), &notes).unwrap();
    model.push(Step::tool_call(
        "send_file",
        json!({"path": "notes.md", "caption": "The notes"}),
    ));
    model.push(Step::text("Here are the notes."));

    let picture = png();
    let mxc = ann.upload(picture.clone(), "image/png", "chart.png").await;
    let asked = ann
        .send_event_retrying(
            &room,
            "m.room.message",
            json!({
                "msgtype": "m.image", "body": "what does this chart show? send the notes too",
                "filename": "chart.png", "url": mxc,
                "info": {"mimetype": "image/png", "size": picture.len(), "w": 64, "h": 64},
                "m.mentions": {"user_ids": [BOT]},
            }),
            30,
        )
        .await
        .expect("sent once the bot joined");
    let answer = ann.wait_for(&room, BOT, 40, |m| body(m) == "Here are the notes.").await;
    assert_eq!(thread_of(&answer), Some(asked.as_str()));

    let (text, url) = image_of(&model.requests()[0]);
    assert!(text.starts_with("what does this chart show?"), "{text}");
    assert!(text.contains("chart.png") && text.contains("you can see it"), "{text}");
    assert_eq!(url, data_url(&picture));

    let file = ann
        .messages_from(&room, BOT)
        .await
        .into_iter()
        .find(|m| m["content"]["msgtype"] == "m.file")
        .expect("the bot posted a file");
    assert_eq!(thread_of(&file), Some(asked.as_str()), "in the conversation's thread");
    assert_eq!(file["content"]["filename"], "notes.md");
    assert_eq!(file["content"]["body"], "The notes");
    assert_eq!(file["content"]["info"]["size"], notes.len());
    let got = ann.download(file["content"]["url"].as_str().unwrap()).await;
    assert_eq!(got, notes);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_an_encrypted_room_files_are_decrypted_for_the_model_and_sent_encrypted() {
    let model = ScriptedModel::start().await;
    let (synapse, ann_http, room) = support::e2ee::encrypted_room().await;
    let port = free_port();
    let sandbox = sandbox(
        &model,
        &synapse,
        &[room.as_str()],
        port,
        "require_mention_in_groups = false\nstreaming = \"off\"",
    );
    let _gw = Gateway::start(&sandbox, port, "probe").await;
    let reply = b"the secret plan, in a file\n".to_vec();
    std::fs::write(sandbox.path().join("workspace/main/plan.txt"), &reply).unwrap();
    model.push(Step::tool_call("send_file", json!({"path": "plan.txt"})));
    model.push(Step::text("Sent the plan."));

    let (ann, joined) = support::e2ee::encrypting_client(&synapse, &ann_http, ("ann", "pw-ann"), &room).await;
    let picture = png();
    let caption = TextMessageEventContent::plain("what is on this secret picture?");
    joined
        .send_attachment(
            "secret.png",
            &mime::IMAGE_PNG,
            picture.clone(),
            AttachmentConfig::new().caption(Some(caption)),
        )
        .await
        .expect("an encrypted attachment");

    // Ann's client receives the bot's file, decrypts the event and the file.
    let file = support::e2ee::next_from_bot(&ann, &joined, 40, |e| e["content"]["msgtype"] == "m.file").await;
    assert!(
        file["content"].get("url").is_none(),
        "no plain URL in an encrypted room"
    );
    let source: MediaSource = serde_json::from_value(json!({"file": file["content"]["file"]})).unwrap();
    let request = MediaRequestParameters {
        source,
        format: MediaFormat::File,
    };
    let got = ann.media().get_media_content(&request, false).await.unwrap();
    assert_eq!(got, reply, "Ann's client decrypts the bot's file");

    let (text, url) = image_of(&model.requests()[0]);
    assert!(text.starts_with("what is on this secret picture?"), "{text}");
    assert_eq!(url, data_url(&picture), "the bot decrypted the picture for the model");
    let stored = ann_http.events(&room).await;
    assert!(
        stored
            .iter()
            .filter(|e| e["sender"] == BOT || e["sender"] == "@ann:localhost")
            .all(|e| e["type"] != "m.room.message"),
        "the homeserver holds no plain message"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_over_the_homeservers_upload_limit_is_refused_before_uploading() {
    use switchboard_test_support::synapse::Tuning;
    let model = ScriptedModel::start().await;
    let synapse = Synapse::start_tuned(Tuning {
        max_upload: Some("1M"),
        ..Tuning::default()
    })
    .await;
    synapse.register("bot", "bot-password").await;
    let ann = synapse.register("ann", "pw-ann").await;
    let dm = ann.create_room("", &[BOT], true).await;
    let port = free_port();
    let sandbox = sandbox(&model, &synapse, &[dm.as_str()], port, "streaming = \"off\"");
    let _gw = Gateway::start(&sandbox, port, "probe").await;
    std::fs::write(
        sandbox.path().join("workspace/main/big.bin"),
        vec![1u8; 2 * 1024 * 1024],
    )
    .unwrap();
    model.push(Step::tool_call("send_file", json!({"path": "big.bin"})));
    model.push(Step::text(
        "The file is too large for this server; it is in the workspace as big.bin.",
    ));
    ann.say(&dm, "send me big.bin").await;
    ann.wait_for(&dm, BOT, 40, |m| body(m).starts_with("The file is too large"))
        .await;
    let results = switchboard_test_support::tool_results(&model.requests()[1]);
    assert!(
        results[0].contains("2.0 MiB, over the 1.0 MiB this chat takes"),
        "the homeserver's own limit was read: {results:?}"
    );
    let from_bot = ann.messages_from(&dm, BOT).await;
    assert!(
        from_bot.iter().all(|m| m["content"]["msgtype"] == "m.text"),
        "{from_bot:#?}"
    );
}
