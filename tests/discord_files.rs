//! Files on Discord through the real `switchboard run` and the loopback
//! Discord (REST, gateway, CDN): an image a person attaches reaches a
//! vision agent as an image, read from the CDN once; `send_file` uploads
//! into the conversation's thread as serenity's multipart message; a 500
//! on the upload and a file over Discord's 10 MiB limit leave the text
//! answer to go out.

mod support;

use serde_json::{Value, json};
use support::{Gateway, Sandbox, free_port, main_agent_on};
use switchboard_test_support::discord::{BOT_ID, FakeDiscord, user};
use switchboard_test_support::{ScriptedModel, Step, last_message_text, tool_results};

async fn setup() -> (ScriptedModel, FakeDiscord, Sandbox, Gateway) {
    let model = ScriptedModel::start().await;
    let dc = FakeDiscord::start().await;
    let port = free_port();
    let config = format!(
        "{}vision = true\n[risk_profiles.default]\nlevel = \"full\"\n[channels.discord.main]\nbot_token = \"TEST.TOKEN\"\napi_url = \"{}\"\nallowed_users = [\"*\"]\nstreaming = \"off\"\n[channels.local.probe]\nallowed_users = []\n",
        main_agent_on(&model.url(), port, "discord.main"),
        dc.url()
    );
    let sandbox = Sandbox::new(&config);
    let gw = Gateway::start(&sandbox, port, "probe").await;
    dc.wait_sessions(1, 0, 20).await;
    (model, dc, sandbox, gw)
}

fn png() -> Vec<u8> {
    let mut data = b"\x89PNG\r\n\x1a\n".to_vec();
    data.extend((0..4096u32).map(|i| (i % 253) as u8));
    data
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attached_image_reaches_a_vision_agent_from_the_cdn() {
    use base64::Engine;
    let (model, dc, _sandbox, _gw) = setup().await;
    model.push(Step::text("That is a bar chart of weekly sales."));
    let ann = user(31, "ann");
    let dm = dc.dm_with(&ann);
    let data = png();
    dc.say_with_file(
        dm,
        &ann,
        "what does this show?",
        ("chart.png", "image/png"),
        data.clone(),
    );
    let answer = dc.wait_bot_messages(dm, 1, 20).await;
    assert_eq!(answer[0]["content"], "That is a bar chart of weekly sales.");
    assert_eq!(dc.cdn_fetches(), 1);
    let request = &model.requests()[0];
    let last = request["messages"].as_array().unwrap().last().unwrap().clone();
    let parts = last["content"].as_array().expect("text and image parts");
    assert!(parts[0]["text"].as_str().unwrap().starts_with("what does this show?"));
    let url = format!(
        "data:image/png;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(&data)
    );
    assert_eq!(parts[1]["image_url"]["url"], url);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_file_uploads_into_the_conversation_thread() {
    let (model, dc, sandbox, _gw) = setup().await;
    let notes = b"# Deploy notes\n1. build\n2. ship\n".to_vec();
    std::fs::write(sandbox.path().join("workspace/main/notes.md"), &notes).unwrap();
    model.push(Step::tool_call(
        "send_file",
        json!({"path": "notes.md", "caption": "The notes"}),
    ));
    model.push(Step::text("Attached the deploy notes."));
    let bo = user(32, "bo");
    let asked = dc.say(FakeDiscord::GENERAL, &bo, &format!("<@{BOT_ID}> send the deploy notes"));
    let in_thread = dc.wait_bot_messages(asked, 2, 20).await;
    assert!(
        dc.bot_messages(FakeDiscord::GENERAL).is_empty(),
        "nothing outside the thread"
    );
    let file = &in_thread[0];
    assert_eq!(file["content"], "The notes");
    let attachments = file["attachments"].as_array().unwrap();
    assert_eq!(attachments.len(), 1);
    assert_eq!(attachments[0]["filename"], "notes.md");
    let url = attachments[0]["url"].as_str().unwrap();
    assert_eq!(dc.attachment_bytes(url).unwrap(), notes);
    assert_eq!(file["allowed_mentions"], json!({"parse": []}));
    assert_eq!(in_thread[1]["content"], "Attached the deploy notes.");
    let upload = dc
        .calls()
        .into_iter()
        .find(|(_, _, body)| body["_uploads"].as_array().is_some_and(|u| !u.is_empty()))
        .expect("a multipart upload");
    assert_eq!(upload.1, format!("/api/v10/channels/{asked}/messages"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_or_too_large_upload_leaves_the_text_answer() {
    let (model, dc, sandbox, _gw) = setup().await;
    std::fs::write(sandbox.path().join("workspace/main/chart.png"), png()).unwrap();
    std::fs::write(
        sandbox.path().join("workspace/main/dump.bin"),
        vec![0u8; 12 * 1024 * 1024],
    )
    .unwrap();
    dc.fail_uploads(5);
    model.push(Step::tool_calls(&[
        ("send_file", r#"{"path": "chart.png"}"#),
        ("send_file", r#"{"path": "dump.bin"}"#),
    ]));
    model.push(Step::text("I could not attach the files; the totals are 3 and 5."));
    let cy = user(33, "cy");
    let dm = dc.dm_with(&cy);
    dc.say(dm, &cy, "send the chart and the dump");
    let mine = dc.wait_bot_messages(dm, 1, 30).await;
    assert_eq!(mine.len(), 1, "{mine:#?}");
    assert_eq!(
        mine[0]["content"],
        "I could not attach the files; the totals are 3 and 5."
    );
    assert!(mine[0]["attachments"].as_array().unwrap().is_empty());
    let results = tool_results(&model.requests()[1]);
    assert!(
        results[0].contains("chart.png was not sent") && results[0].contains("500"),
        "{results:?}"
    );
    assert!(
        results[1].contains("12.0 MiB, over the 10.0 MiB this chat takes"),
        "{results:?}"
    );
    let uploads: Vec<Value> = dc
        .calls()
        .into_iter()
        .filter(|(_, _, b)| b["_uploads"].as_array().is_some_and(|u| !u.is_empty()))
        .map(|c| c.2)
        .collect();
    assert!(!uploads.is_empty(), "the chart was tried");
    assert!(
        uploads.iter().all(|b| b["_uploads"][0]["filename"] == "chart.png"),
        "the dump was never uploaded"
    );
    assert!(last_message_text(&model.requests()[0]).contains("send the chart"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attachment_over_the_limit_is_not_downloaded_and_the_message_is_answered() {
    let (model, dc, _sandbox, _gw) = setup().await;
    model.push(Step::text("I could not open the archive, but here is what I know."));
    let di = user(34, "di");
    let dm = dc.dm_with(&di);
    dc.say_with_file(
        dm,
        &di,
        "what is in this archive?",
        ("logs.zip", "application/zip"),
        vec![0u8; 25 * 1024 * 1024],
    );
    let mine = dc.wait_bot_messages(dm, 2, 20).await;
    let notice = mine[0]["content"].as_str().unwrap();
    assert!(
        notice.contains("logs.zip was not taken: it is 25.0 MiB, over the 20.0 MiB limit"),
        "{notice}"
    );
    assert_eq!(
        mine[1]["content"],
        "I could not open the archive, but here is what I know."
    );
    assert_eq!(dc.cdn_fetches(), 0, "a file announced too large is not downloaded");
    let told = last_message_text(&model.requests()[0]);
    assert!(
        told.starts_with("what is in this archive?") && told.contains("logs.zip: file (application/zip), not saved")
    );
}
