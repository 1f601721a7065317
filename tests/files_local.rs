//! Files in the terminal and on local channels: `switchboard chat`'s
//! `/attach PATH caption` reaches a vision agent as an image plus the
//! caption, and a file the agent sends is saved under `downloads/`; on a
//! local channel, files come base64 in the API call and the bot's file is
//! an event of kind `file` in the thread.

mod support;

use base64::Engine;
use serde_json::json;
use support::{Sandbox, provider};
use switchboard_test_support::{ScriptedModel, Step, last_message_text, tool_results};

fn b64(data: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(data)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_terminal_attaches_a_picture_and_receives_a_file() {
    let model = ScriptedModel::start().await;
    model.push(Step::tool_call(
        "send_file",
        json!({"path": "answer.txt", "caption": "the answer"}),
    ));
    model.push(Step::text("It is a red square; the answer is attached."));
    let config = format!(
        "{}[agents.main]\nmodel_provider = \"p\"\nvision = true\n[risk_profiles.default]\nlevel = \"full\"\n",
        provider("p", &model.url(), "")
    );
    let sandbox = Sandbox::new(&config);
    let picture = b"\x89PNG\r\n\x1a\nred square".to_vec();
    std::fs::write(sandbox.path().join("square.png"), &picture).unwrap();
    let mut chat = sandbox.chat(&[]);
    // The workspace exists once the chat has started.
    let workspace = sandbox.path().join("workspace/main");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !workspace.exists() {
        assert!(std::time::Instant::now() < deadline, "the chat never started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::fs::write(workspace.join("answer.txt"), "42\n").unwrap();
    chat.send("/attach square.png what shape is this?");
    chat.expect("[file] answer.txt (3 B) saved to downloads/answer.txt", 20);
    chat.expect("the answer", 5);
    chat.expect("It is a red square", 20);
    assert_eq!(
        std::fs::read(sandbox.path().join("downloads/answer.txt")).unwrap(),
        b"42\n"
    );

    let request = &model.requests()[0];
    let parts = request["messages"].as_array().unwrap().last().unwrap()["content"].clone();
    assert!(parts[0]["text"].as_str().unwrap().starts_with("what shape is this?"));
    assert_eq!(
        parts[1]["image_url"]["url"],
        format!("data:image/png;base64,{}", b64(&picture))
    );

    chat.send("/attach no-such-file.pdf");
    chat.expect("cannot attach no-such-file.pdf", 10);
    assert_eq!(model.requests().len(), 2, "a file that is not there starts no turn");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_chat_sends_files_in_the_api_call_and_gets_file_events() {
    let (model, sandbox, gw) = support::team_gateway("[risk_profiles.default]\nlevel = \"full\"\n", "").await;
    model.push(Step::tool_call("send_file", json!({"path": "summary.txt"})));
    model.push(Step::text("Summary attached."));
    std::fs::write(sandbox.path().join("workspace/main/summary.txt"), "short\n").unwrap();
    let (status, body) = gw
        .post_raw(
            "/local/team/send",
            &[],
            json!({"chat": "room", "thread": "t1", "user": "cli:ann", "text": "summarize", "mentioned": true,
                   "files": [{"name": "notes.txt", "mime": "text/plain", "data": b64(b"long notes")}]}),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    let mut cursor = 0;
    let file = gw.wait_for("team", &mut cursor, 20, |e| e["kind"] == "file").await;
    assert_eq!(file["thread"], "t1");
    assert_eq!(file["file"]["name"], "summary.txt");
    assert_eq!(file["file"]["data"], b64(b"short\n"));
    gw.wait_for("team", &mut cursor, 20, |e| e["text"] == "Summary attached.")
        .await;
    let told = last_message_text(&model.requests()[0]);
    assert!(
        told.starts_with("summarize") && told.contains("notes.txt: file (text/plain), 10 B"),
        "{told}"
    );
    let saved = told.split("- ").nth(1).and_then(|l| l.split(':').next()).unwrap();
    assert_eq!(
        std::fs::read(sandbox.path().join("workspace/main").join(saved)).unwrap(),
        b"long notes"
    );
    assert!(tool_results(&model.requests()[1])[0].starts_with("sent summary.txt"));

    let (status, body) = gw
        .post_raw(
            "/local/team/send",
            &[],
            json!({"chat": "room", "user": "cli:ann", "text": "x", "files": [{"name": "a", "data": "%%%"}]}),
        )
        .await;
    assert_eq!(status, 400);
    assert!(body.contains("files[0].data is not base64"), "{body}");
}
