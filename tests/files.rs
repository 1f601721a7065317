//! Files in and out of chats through the real `switchboard run` on the
//! loopback Telegram Bot API: a photo with a caption reaches a vision
//! agent as an image plus the caption (and is saved under `received/`); a
//! 30 MiB document is refused politely while its caption is answered;
//! `send_file` posts a file in a forum topic; a failed upload still lets
//! the text answer through. Discord and Matrix: `discord_files.rs`,
//! `matrix_files.rs`.

mod support;

use serde_json::{Value, json};
use std::time::Duration;
use support::{Gateway, Sandbox, free_port, main_agent_on};
use switchboard_test_support::telegram::{FakeTelegram, private_chat, supergroup, user};
use switchboard_test_support::{ScriptedModel, Step, last_message_text, tool_results};

/// `main` on `telegram.main` (tools unguarded; `vision` as given), the
/// local probe channel, a scripted model.
async fn gateway(tg: &FakeTelegram, vision: bool) -> (ScriptedModel, Sandbox, Gateway) {
    let model = ScriptedModel::start().await;
    let port = free_port();
    let config = format!(
        "{}vision = {vision}\n[risk_profiles.default]\nlevel = \"full\"\n{}[channels.local.probe]\nallowed_users = []\n",
        main_agent_on(&model.url(), port, "telegram.main"),
        switchboard_test_support::config::telegram_main(&tg.url()),
    );
    let sandbox = Sandbox::new(&config);
    let gw = Gateway::start(&sandbox, port, "probe").await;
    (model, sandbox, gw)
}

/// Bytes that look like a small JPEG.
fn picture() -> Vec<u8> {
    let mut data = vec![0xFF, 0xD8, 0xFF, 0xE0];
    data.extend((0..2048u32).map(|i| (i * 7 % 251) as u8));
    data.extend([0xFF, 0xD9]);
    data
}

fn base64(data: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(data)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_photo_with_a_caption_reaches_a_vision_agent_as_an_image_plus_the_caption() {
    let tg = FakeTelegram::start().await;
    let (model, sandbox, _gw) = gateway(&tg, true).await;
    model.push(Step::text("A tabby cat on a sofa."));
    let data = picture();
    tg.photo(
        private_chat(21, "Ann"),
        user(21, "Ann"),
        "what is in this picture?",
        data.clone(),
        None,
    );
    let sent = tg.wait_sent(1, 20).await;
    assert_eq!(sent[0]["text"], "A tabby cat on a sofa.");

    let request = &model.requests()[0];
    let last = request["messages"].as_array().unwrap().last().unwrap().clone();
    let parts = last["content"].as_array().expect("text and image parts");
    let text = parts[0]["text"].as_str().unwrap();
    assert!(text.starts_with("what is in this picture?"), "{text}");
    assert!(
        text.contains("image (image/jpeg)") && text.contains("you can see it"),
        "{text}"
    );
    assert_eq!(parts[1]["type"], "image_url");
    assert_eq!(
        parts[1]["image_url"]["url"],
        format!("data:image/jpeg;base64,{}", base64(&data)),
        "the largest size, whole"
    );
    // The largest size was fetched, not the thumbnail, and kept in the workspace.
    let asked: Vec<Value> = tg.calls("getfile");
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["file_id"], "FILE2");
    let path = text
        .split("- ")
        .nth(1)
        .and_then(|l| l.split(':').next())
        .expect("the saved path is named");
    assert!(path.starts_with("received/"), "{path}");
    let saved = std::fs::read(sandbox.path().join("workspace/main").join(path)).expect("saved under received/");
    assert_eq!(saved, data);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_vision_a_photo_is_saved_and_described_but_not_shown() {
    let tg = FakeTelegram::start().await;
    let (model, _sandbox, _gw) = gateway(&tg, false).await;
    model.push(Step::text("I see you sent a photo."));
    tg.photo(private_chat(22, "Bo"), user(22, "Bo"), "", picture(), None);
    tg.wait_sent(1, 20).await;
    let request = &model.requests()[0];
    let text = last_message_text(request);
    assert!(text.starts_with("[Files sent with this message"), "{text}");
    assert!(text.contains("received/") && !text.contains("you can see it"), "{text}");
    assert!(
        !request.to_string().contains("image_url"),
        "no image content without vision"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_30_mib_document_is_refused_politely_and_its_caption_answered() {
    let tg = FakeTelegram::start().await;
    let (model, sandbox, _gw) = gateway(&tg, true).await;
    model.push(Step::text(
        "The file was too large for me, but the quarterly numbers are usually in the summary.",
    ));
    tg.document(
        private_chat(23, "Cy"),
        user(23, "Cy"),
        "where are the quarterly numbers?",
        ("q3-report.pdf", "application/pdf"),
        vec![7u8; 30 * 1024 * 1024],
    );
    let sent = tg.wait_sent(2, 30).await;
    let texts: Vec<&str> = sent.iter().filter_map(|m| m["text"].as_str()).collect();
    assert!(
        texts.iter().any(|t| t.contains("q3-report.pdf was not taken")
            && t.contains("30.0 MiB, over the 20.0 MiB limit")
            && t.contains("answered without it")),
        "{texts:?}"
    );
    assert!(
        texts.iter().any(|t| t.starts_with("The file was too large for me")),
        "{texts:?}"
    );
    let told = last_message_text(&model.requests()[0]);
    assert!(told.starts_with("where are the quarterly numbers?"), "{told}");
    assert!(
        told.contains("q3-report.pdf: file (application/pdf), not saved"),
        "{told}"
    );
    assert!(
        tg.calls("getfile").is_empty(),
        "a file known to be too large is not fetched"
    );
    let inbox = sandbox.path().join("workspace/main/inbox");
    assert!(
        !inbox.exists() || std::fs::read_dir(inbox).unwrap().next().is_none(),
        "nothing saved"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_file_posts_a_file_in_the_forum_topic_it_was_asked_in() {
    let tg = FakeTelegram::start().await;
    let (model, sandbox, _gw) = gateway(&tg, false).await;
    let report = b"name,total\nann,3\nbo,5\n".to_vec();
    std::fs::write(sandbox.path().join("workspace/main/report.csv"), &report).unwrap();
    model.push(Step::tool_call(
        "send_file",
        json!({"path": "report.csv", "caption": "Here is the report"}),
    ));
    model.push(Step::text("Sent you the report."));
    let group = supergroup(-1001, "team");
    tg.message(
        group,
        user(24, "Di"),
        "@switchboard_bot send me the report",
        Some(7),
        None,
    );
    let sent = tg.wait_sent(1, 20).await;
    assert_eq!(sent[0]["text"], "Sent you the report.");
    assert_eq!(sent[0]["message_thread_id"], 7);
    let uploads = tg.uploads();
    assert_eq!(uploads.len(), 1, "{uploads:?}");
    let up = &uploads[0];
    assert_eq!((up.chat_id.clone(), up.thread.clone()), (json!(-1001), Some(json!(7))));
    assert_eq!(up.filename, "report.csv");
    assert_eq!(up.caption.as_deref(), Some("Here is the report"));
    assert_eq!(up.data, report);
    let results = tool_results(&model.requests()[1]);
    assert!(results.last().unwrap().starts_with("sent report.csv"), "{results:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_upload_is_told_to_the_model_and_the_text_still_goes_out() {
    let tg = FakeTelegram::start().await;
    let (model, sandbox, _gw) = gateway(&tg, false).await;
    std::fs::write(sandbox.path().join("workspace/main/chart.png"), picture()).unwrap();
    tg.fail_uploads(10);
    model.push(Step::tool_call("send_file", json!({"path": "chart.png"})));
    model.push(Step::text("The chart could not be attached; the totals are 3 and 5."));
    // Over the limit: refused before any upload.
    let big = vec![1u8; 51 * 1000 * 1000];
    std::fs::write(sandbox.path().join("workspace/main/huge.bin"), big).unwrap();
    tg.message(private_chat(25, "Ed"), user(25, "Ed"), "chart please", None, None);
    // A 500 passes: the upload is tried three times, and teloxide waits 10 s
    // after each server error before it returns it.
    let sent = tg.wait_sent(1, 90).await;
    assert_eq!(
        sent[0]["text"],
        "The chart could not be attached; the totals are 3 and 5."
    );
    assert!(tg.uploads().is_empty());
    let results = tool_results(&model.requests()[1]);
    assert!(
        results[0].contains("chart.png was not sent")
            && results[0].contains("Internal Server Error")
            && results[0].contains("text answer still reaches"),
        "{results:?}"
    );

    model.push(Step::tool_call("send_file", json!({"path": "huge.bin"})));
    model.push(Step::text("That file is too big to send here."));
    tg.message(private_chat(25, "Ed"), user(25, "Ed"), "and the raw data?", None, None);
    let sent = tg.wait_sent(2, 30).await;
    assert_eq!(sent[1]["text"], "That file is too big to send here.");
    let results = tool_results(&model.requests()[3]);
    let refusal = results.last().unwrap();
    assert!(
        refusal.contains("48.6 MiB, over the 47.7 MiB this chat takes"),
        "{results:?}"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(tg.uploads().is_empty());
}
