//! What a small local model does to a chat, through `switchboard run` on a
//! Telegram bot with its shipped defaults (direct messages stream as
//! drafts; the model server is on loopback, so calls written as text are
//! read): a call written as a fenced block runs and is never shown, a turn
//! whose tools are used up ends in words, and a refused command's fix goes
//! to the ops group once, never to the model. The shapes themselves are
//! covered one by one in the runtime's unit tests (provider/text_calls).

mod support;

use serde_json::{Value, json};
use std::time::Duration;
use support::{Gateway, Sandbox, free_port, provider};
use switchboard_test_support::telegram::{FakeTelegram, private_chat, user};
use switchboard_test_support::{ScriptedModel, Step, tool_results};

const OPS: i64 = -1_009_999;
const ANN: i64 = 11;

/// Agent `main` on `model` answering Ann's DMs on the stand-in, with
/// `profile` as its risk profile's body and `extra` appended.
fn config(model: &str, tg: &str, profile: &str, extra: &str) -> String {
    format!(
        r#"{}[web]
[agents.main]
model_provider = "p"
risk_profile = "team"
channels = ["telegram.main"]

[risk_profiles.team]
{profile}
[risk_profiles.team.approval_route]
approver_channel = "telegram.main"
approver_recipient = "ops"
approvers = ["tg:99"]

[channels.telegram.main]
bot_token = "123:TEST"
api_url = "{tg}"
allowed_users = ["tg:{ANN}"]
rooms = {{ "ops" = "{OPS}" }}

[channels.local.probe]
allowed_users = []
{extra}"#,
        provider("p", model, "")
    )
}

fn text(m: &Value) -> &str {
    m["text"].as_str().unwrap_or("")
}

/// Every text the bot put into a chat: messages, drafts and edits.
fn everything_shown(tg: &FakeTelegram) -> Vec<String> {
    ["sendmessage", "sendmessagedraft", "editmessagetext"]
        .iter()
        .flat_map(|m| tg.calls(m))
        .map(|c| text(&c).to_string())
        .collect()
}

/// The bot's messages to `chat`, once there are `n`.
async fn wait_for(tg: &FakeTelegram, chat: i64, n: usize) -> Vec<String> {
    for _ in 0..300 {
        let got: Vec<String> = tg
            .sent()
            .iter()
            .filter(|m| m["chat"]["id"] == chat)
            .map(|m| text(m).to_string())
            .collect();
        if got.len() >= n {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("fewer than {n} messages to {chat}: {:?}", tg.sent());
}

async fn start(profile: &str, extra: &str) -> (ScriptedModel, FakeTelegram, Sandbox, Gateway) {
    let model = ScriptedModel::start().await;
    let tg = FakeTelegram::start().await;
    let sandbox = Sandbox::new(&config(&model.url(), &tg.url(), profile, extra));
    let gw = Gateway::start(&sandbox, free_port(), "probe").await;
    (model, tg, sandbox, gw)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_written_as_a_fenced_block_runs_and_is_never_shown() {
    let (model, tg, sandbox, _gw) = start("level = \"full\"", "").await;
    let call = "I'll write it now.\n\n```json\n{\"name\": \"file_write\", \"arguments\": {\"path\": \"note.txt\", \"content\": \"hello\"}}\n```";
    model.push(Step::text(call).streamed(Duration::from_millis(100)));
    model.push(Step::text("Written to note.txt.").streamed(Duration::from_millis(100)));
    tg.message(
        private_chat(ANN, "Ann"),
        user(ANN, "Ann"),
        "write hello to note.txt",
        None,
        None,
    );
    let ann = wait_for(&tg, ANN, 1).await;
    assert_eq!(ann, ["Written to note.txt."]);
    let written = std::fs::read_to_string(sandbox.path().join("workspace/main/note.txt")).unwrap();
    assert_eq!(written, "hello");
    assert!(
        !tg.calls("sendmessagedraft").is_empty(),
        "the answers were streamed as drafts"
    );
    let shown = everything_shown(&tg);
    assert!(
        shown.iter().all(|t| !t.contains("```") && !t.contains("\"name\"")),
        "no part of the call reached the chat: {shown:#?}"
    );
    // The model saw its call as a call, answered by the tool's result.
    let second = &model.requests()[1];
    let assistant = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .unwrap();
    assert_eq!(assistant["content"], "I'll write it now.");
    assert_eq!(assistant["tool_calls"][0]["function"]["name"], "file_write");
    assert_eq!(tool_results(second).len(), 1, "{second}");
}

/// After its call ran, the real small model once answered with the call
/// echoed back with its output (`{"name", "arguments", "output"}`): not a
/// call to make again, and not words for the person either.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_echoed_with_its_output_is_never_shown_or_run_again() {
    let (model, tg, sandbox, _gw) = start("level = \"full\"", "").await;
    model.push(Step::tool_call(
        "file_write",
        json!({"path": "hello.txt", "content": "hi", "append": false}),
    ));
    let echo = r#"{"name": "file_write", "arguments": {"append": false, "content": "hi", "path": "hello.txt"}, "output": "wrote 2 bytes to hello.txt"}"#;
    model.push(Step::text(echo).streamed(Duration::from_millis(100)));
    tg.message(
        private_chat(ANN, "Ann"),
        user(ANN, "Ann"),
        "write hi to hello.txt",
        None,
        None,
    );
    let ann = wait_for(&tg, ANN, 1).await;
    assert_eq!(ann, ["Done: file_write ×1."]);
    let written = std::fs::read_to_string(sandbox.path().join("workspace/main/hello.txt")).unwrap();
    assert_eq!(written, "hi");
    assert_eq!(model.requests().len(), 2, "the echo was not taken as a call to make");
    let shown = everything_shown(&tg);
    assert!(
        shown
            .iter()
            .all(|t| !t.contains("\"name\"") && !t.contains("\"output\"")),
        "no part of the echo reached the chat: {shown:#?}"
    );
}

/// Small models often answer nothing once their tool has answered: they
/// are asked once more, for words, with no tools offered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_answer_after_a_tool_is_asked_again_for_words() {
    let (model, tg, _sandbox, _gw) = start("level = \"full\"", "").await;
    model.push(Step::tool_call("memory_recall", json!({"query": "stand-up"})));
    model.push(Step::text(""));
    model.push(Step::text("Nothing is saved about the stand-up."));
    tg.message(
        private_chat(ANN, "Ann"),
        user(ANN, "Ann"),
        "when is the stand-up?",
        None,
        None,
    );
    let ann = wait_for(&tg, ANN, 1).await;
    assert_eq!(ann, ["Nothing is saved about the stand-up."]);
    let requests = model.requests();
    assert_eq!(requests.len(), 3, "asked once more");
    assert!(requests[1].get("tools").is_some());
    let last = &requests[2];
    assert!(last.get("tools").is_none(), "the words request offers no tools: {last}");
    let note = last["messages"].as_array().unwrap().last().unwrap().clone();
    assert!(
        note["content"]
            .as_str()
            .unwrap()
            .contains("Answer the user now in plain words"),
        "{note}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_used_up_end_in_words_never_in_json() {
    let (model, tg, _sandbox, _gw) = start(
        "level = \"full\"",
        "[runtime_profiles.default]\nmax_tool_iterations = 1\n",
    )
    .await;
    model.push(Step::tool_call("memory_recall", json!({"query": "stand-up"})));
    // Asked for words, the model writes another call.
    model.push(Step::text(
        "<tool_call>\n{\"name\": \"memory_recall\", \"arguments\": {\"query\": \"meeting\"}}\n</tool_call>",
    ));
    tg.message(
        private_chat(ANN, "Ann"),
        user(ANN, "Ann"),
        "when is the stand-up?",
        None,
        None,
    );
    let ann = wait_for(&tg, ANN, 1).await;
    assert_eq!(
        ann[0],
        "(stopped after 1 tool iterations without a final answer; raise [runtime_profiles.default].max_tool_iterations if the task needs more)\n\nDone so far: memory_recall ×1."
    );
    let last = model.requests().last().cloned().unwrap();
    assert!(last.get("tools").is_none(), "the last request offers no tools: {last}");
    let note = last["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(note["role"], "system");
    assert!(
        note["content"]
            .as_str()
            .unwrap()
            .contains("No more tool calls are possible for this message (tools: "),
        "{note}"
    );
    assert!(everything_shown(&tg).iter().all(|t| !t.contains("<tool_call>")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_command_is_explained_to_the_ops_group_once_and_never_to_the_model() {
    let (model, tg, _sandbox, _gw) = start("level = \"full\"\nallowed_commands = [\"date\"]", "").await;
    for _ in 0..2 {
        model.push(Step::tool_call("shell", json!({"command": "touch x"})));
        model.push(Step::text("I may not do that here."));
    }
    for (i, ask) in ["make a file x", "try again please"].iter().enumerate() {
        tg.message(private_chat(ANN, "Ann"), user(ANN, "Ann"), ask, None, None);
        wait_for(&tg, ANN, i + 1).await;
    }
    for req in model.requests().iter().filter(|r| !tool_results(r).is_empty()) {
        let result = &tool_results(req)[0];
        assert!(
            result.contains("command 'touch' is not allowed for this agent"),
            "{result}"
        );
        assert!(
            !result.contains("risk_profiles") && !result.contains("allowed_commands"),
            "{result}"
        );
    }
    let ops = wait_for(&tg, OPS, 1).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let ops_now = wait_for(&tg, OPS, 1).await;
    assert_eq!(
        ops_now,
        ["Agent main was refused the command 'touch'. To allow it, add it to [risk_profiles.team].allowed_commands."],
        "told once for two refusals: {ops:?}"
    );
}
