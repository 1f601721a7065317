//! Voice messages through `switchboard run` with `[transcription]` pointing
//! at a loopback OpenAI-shaped speech-to-text server: on Telegram a voice
//! note is transcribed, shown back, answered as text and still saved; a
//! spoken "slash subagents list" runs the command; a note over the length
//! limit and a failing server are said to the person and the agent. On
//! Discord an audio attachment and on Matrix (a real Synapse) an `m.audio`
//! are transcribed the same way (and there the status reaction ends as
//! ✅ with the earlier ones redacted).

mod support;

use serde_json::{Value, json};
use support::{Gateway, Sandbox, free_port, main_agent_on, matrix_config};
use switchboard_test_support::discord::{FakeDiscord, user as discord_user};
use switchboard_test_support::synapse::{Synapse, body};
use switchboard_test_support::telegram::{FakeTelegram, private_chat, user};
use switchboard_test_support::{ScriptedModel, Step, Transcriber};

fn transcription(url: &str) -> String {
    format!(
        "[transcription]\nbase_url = \"{url}\"\nmodel = \"whisper-large-v3\"\nlanguage = \"en\"\nmax_seconds = 600\n"
    )
}

/// OGG-looking bytes carrying `marker` (what the transcriber "hears").
fn ogg(marker: &str) -> Vec<u8> {
    let mut data = b"OggS\x00\x02".to_vec();
    data.extend_from_slice(marker.as_bytes());
    data.extend((0..2000u32).map(|i| (i * 7 % 251) as u8));
    data
}

/// The last person message of a model request.
fn last_user(r: &Value) -> String {
    r["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn telegram_voice_notes_are_heard_and_spoken_commands_run() {
    let model = ScriptedModel::start().await;
    let tg = FakeTelegram::start().await;
    let stt = Transcriber::start().await;
    let port = free_port();
    let config = format!(
        "{}{}[channels.telegram.main]\nbot_token = \"123:TEST\"\napi_url = \"{}\"\nallowed_users = [\"*\"]\nstreaming = \"off\"\n[channels.local.probe]\nallowed_users = []\n",
        main_agent_on(&model.url(), port, "telegram.main"),
        transcription(&stt.url()),
        tg.url()
    );
    let sandbox = Sandbox::new(&config);
    let _gw = Gateway::start(&sandbox, port, "probe").await;
    let ann = || (private_chat(11, "Ann"), user(11, "Ann"));

    // A voice note: shown back, answered as what was said, and saved.
    stt.hears(b"WEATHER", "What is the weather in Lyon tomorrow?");
    model.push(Step::text("Sunny in Lyon."));
    let (chat, from) = ann();
    tg.voice(chat, from, ogg("WEATHER"), 4);
    let sent = tg.wait_sent(2, 20).await;
    assert_eq!(sent[0]["text"], "🎤 “What is the weather in Lyon tomorrow?”");
    assert_eq!(sent[1]["text"], "Sunny in Lyon.");
    let asked = last_user(&model.requests()[0]);
    assert!(asked.starts_with("What is the weather in Lyon tomorrow?"), "{asked}");
    assert!(
        asked.contains("received/") && asked.contains("audio (audio/ogg)"),
        "the file is saved: {asked}"
    );
    let heard = &stt.heard()[0];
    assert_eq!(
        (
            heard.model.as_str(),
            heard.content_type.as_str(),
            heard.language.as_deref()
        ),
        ("whisper-large-v3", "audio/ogg", Some("en"))
    );
    assert!(heard.filename.ends_with(".ogg"), "{}", heard.filename);
    let saved = std::fs::read_dir(sandbox.path().join("workspace/main/received"))
        .unwrap()
        .count();
    assert_eq!(saved, 1, "the audio stays saved");

    // A spoken command runs as the command: no model request.
    stt.hears(b"SUBAGENTS", "Slash subagents list.");
    let (chat, from) = ann();
    tg.voice(chat, from, ogg("SUBAGENTS"), 2);
    let sent = tg.wait_sent(4, 20).await;
    assert_eq!(sent[2]["text"], "🎤 “Slash subagents list.”");
    assert_eq!(sent[3]["text"], "No subagents in this chat in the last 30 minutes.");
    assert_eq!(model.requests().len(), 1);

    // Too long: not sent to the transcriber; the person and the agent are told.
    model.push(Step::text("I could not hear it."));
    let (chat, from) = ann();
    tg.voice(chat, from, ogg("LONG"), 900);
    let sent = tg.wait_sent(6, 20).await;
    assert_eq!(
        sent[4]["text"],
        "🎤 I could not transcribe this voice message (it is longer than 600 seconds); it is saved, and the agent is told."
    );
    assert_eq!(sent[5]["text"], "I could not hear it.");
    assert!(last_user(&model.requests()[1]).starts_with(
        "(a voice message that could not be transcribed: it is longer than 600 seconds; the file is saved)"
    ));
    assert_eq!(stt.heard().len(), 2, "the long note was not sent");

    // The server fails: said, and the turn still runs.
    stt.failing(Some(500));
    model.push(Step::text("Sorry about that."));
    let (chat, from) = ann();
    tg.voice(chat, from, ogg("BROKEN"), 3);
    let sent = tg.wait_sent(8, 20).await;
    assert!(
        sent[6]["text"]
            .as_str()
            .unwrap()
            .contains("(the transcription server answered HTTP 500)"),
        "{}",
        sent[6]["text"]
    );
    assert_eq!(sent[7]["text"], "Sorry about that.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discord_audio_is_heard() {
    let model = ScriptedModel::start().await;
    let dc = FakeDiscord::start().await;
    let stt = Transcriber::start().await;
    let port = free_port();
    let config = format!(
        "{}{}[channels.discord.main]\nbot_token = \"TEST.TOKEN\"\napi_url = \"{}\"\nallowed_users = [\"*\"]\nstreaming = \"off\"\n[channels.local.probe]\nallowed_users = []\n",
        main_agent_on(&model.url(), port, "discord.main"),
        transcription(&stt.url()),
        dc.url()
    );
    let sandbox = Sandbox::new(&config);
    let _gw = Gateway::start(&sandbox, port, "probe").await;
    dc.wait_sessions(1, 0, 20).await;
    let ann = discord_user(21, "ann");
    let dm = dc.dm_with(&ann);
    stt.hears(b"DEPLOY", "Is the deploy done?");
    model.push(Step::text("Yes, deployed."));
    dc.say_with_file(dm, &ann, "", ("voice-message.ogg", "audio/ogg"), ogg("DEPLOY"));
    let answers = dc.wait_bot_messages(dm, 2, 20).await;
    let texts: Vec<&str> = answers.iter().map(|m| m["content"].as_str().unwrap()).collect();
    assert_eq!(texts, ["🎤 “Is the deploy done?”", "Yes, deployed."]);
    assert!(last_user(&model.requests()[0]).starts_with("Is the deploy done?"));
    assert_eq!(stt.heard()[0].filename, "voice-message.ogg");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn matrix_audio_is_heard() {
    let model = ScriptedModel::start().await;
    let stt = Transcriber::start().await;
    let synapse = Synapse::start().await;
    synapse.register("bot", "bot-password").await;
    let ann = synapse.register("ann", "pw-ann").await;
    let room = ann.create_room("voice", &["@bot:localhost"], true).await;
    let port = free_port();
    let config = format!(
        "{}{}",
        matrix_config(
            &model.url(),
            &synapse.url(),
            &[room.as_str()],
            port,
            "streaming = \"off\""
        ),
        transcription(&stt.url())
    );
    let sandbox = Sandbox::new(&config);
    let _gw = Gateway::start(&sandbox, port, "probe").await;
    stt.hears(b"ROOM", "Book the meeting room for Friday.");
    // Slow enough for status reactions (a quick answer gets none).
    model.push(Step::text("Booked for Friday.").delay(std::time::Duration::from_millis(1500)));
    let audio = ogg("ROOM");
    let mxc = ann.upload(audio.clone(), "audio/ogg", "note.ogg").await;
    let asked = ann
        .send_event_retrying(
            &room,
            "m.room.message",
            json!({"msgtype": "m.audio", "body": "note.ogg", "url": mxc,
               "info": {"mimetype": "audio/ogg", "size": audio.len(), "duration": 3000}}),
            30,
        )
        .await
        .expect("sent once the bot joined");
    ann.wait_for(&room, "@bot:localhost", 40, |m| body(m) == "Booked for Friday.")
        .await;
    let shown = ann
        .messages_from(&room, "@bot:localhost")
        .await
        .into_iter()
        .any(|m| body(&m) == "🎤 “Book the meeting room for Friday.”");
    assert!(shown, "the transcript was shown");
    assert!(last_user(&model.requests()[0]).starts_with("Book the meeting room for Friday."));

    // Status reactions on Matrix: ✅ stays on the message, 👀 was redacted.
    let mut live: Vec<String> = Vec::new();
    let mut redacted = 0;
    for _ in 0..50 {
        let mine: Vec<Value> = ann
            .events(&room)
            .await
            .into_iter()
            .filter(|e| e["type"] == "m.reaction" && e["sender"] == "@bot:localhost")
            .collect();
        live = mine
            .iter()
            .filter(|e| e["content"]["m.relates_to"]["event_id"] == asked.as_str())
            .filter_map(|e| e["content"]["m.relates_to"]["key"].as_str().map(str::to_string))
            .collect();
        redacted = mine
            .iter()
            .filter(|e| !e["unsigned"]["redacted_because"].is_null())
            .count();
        if live == ["✅"] && redacted >= 1 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    assert_eq!(live, ["✅"], "one live reaction: done");
    assert!(redacted >= 1, "the earlier reactions were redacted");
}
