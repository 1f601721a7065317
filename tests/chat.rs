//! `switchboard chat` end to end: the real binary, a scripted model server
//! over HTTP, answers typed at the terminal prompt.

mod support;

use serde_json::json;
use support::{Sandbox, provider};
use switchboard_test_support::{ScriptedModel, Step, offered_tools, tool_results};

const AGENT: &str = r#"
[agents.main]
model_provider = "primary"
channels = ["cli"]

[risk_profiles.default]
level = "supervised"
auto_approve = ["memory_store", "memory_recall", "file_read"]
allowed_commands = ["echo", "ls"]
excluded_tools = ["model_switch"]
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_loop_with_terminal_approvals() {
    let model = ScriptedModel::start().await;
    model.push(Step::tool_call("shell", json!({"command": "echo deployed"})));
    model.push(Step::tool_call(
        "file_write",
        json!({"path": "report.txt", "content": "password=hunter2"}),
    ));
    model.push(Step::tool_call(
        "memory_store",
        json!({"key": "deploy", "content": "done at noon"}),
    ));
    model.push(Step::tool_call("file_read", json!({"path": "report.txt"})));
    model.push(Step::text("All steps finished."));
    let sandbox = Sandbox::new(&format!("{}{AGENT}", provider("primary", &model.url(), "")));
    let mut chat = sandbox.chat(&[]);
    chat.send("deploy and write a report");

    // shell is not auto-approved: the prompt waits for the terminal.
    let prompt = chat.expect("Approval needed [", 20);
    chat.expect("tool: shell (risk: low)", 5);
    chat.expect("Allow?", 5);
    assert!(model.requests().len() == 1, "the loop must wait for the answer");
    chat.send("y");
    chat.expect("Allowed once.", 5);
    chat.expect("[tool] shell: ok", 10);

    // file_write asks too; its secret is redacted in the prompt; deny it.
    let args_line = {
        chat.expect("tool: file_write", 10);
        chat.expect("args:", 5)
    };
    assert!(!args_line.contains("hunter2"), "secret shown in prompt: {args_line}");
    chat.send("n");
    chat.expect("Denied.", 5);
    chat.expect("[tool] memory_store: ok", 10);
    chat.expect("main> All steps finished.", 10);
    let (code, _) = chat.finish();
    assert_eq!(code, 0);

    let ws = sandbox.path().join("workspace/main");
    assert!(!ws.join("report.txt").exists(), "a denied write must not happen");
    let reqs = model.requests();
    assert_eq!(reqs.len(), 5);
    assert_eq!(tool_results(&reqs[1])[0].trim(), "deployed");
    let denied = &tool_results(&reqs[2])[1];
    assert_eq!(denied, "Error: file_write was not run: denied by cli:tester.");
    assert!(tool_results(&reqs[4])[3].contains("cannot read 'report.txt'"));
    for r in &reqs {
        let tools = offered_tools(r);
        assert!(
            tools.contains(&"shell".into()) && !tools.contains(&"model_switch".into()),
            "{tools:?}"
        );
    }
    assert!(prompt.contains("Approval needed"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn excluded_tool_is_never_offered() {
    let model = ScriptedModel::start().await;
    model.push(Step::text("hello"));
    let config = format!("{}{AGENT}", provider("primary", &model.url(), "")).replace(
        "excluded_tools = [\"model_switch\"]",
        "excluded_tools = [\"shell\", \"file_write\"]",
    );
    let sandbox = Sandbox::new(&config);
    let mut chat = sandbox.chat(&[]);
    chat.send("hi");
    chat.expect("main> hello", 20);
    chat.finish();
    let tools = offered_tools(&model.requests()[0]);
    assert!(
        !tools.contains(&"shell".into()) && !tools.contains(&"file_write".into()),
        "{tools:?}"
    );
    assert!(tools.contains(&"file_read".into()), "{tools:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_500_falls_back_to_the_next_provider() {
    let primary = ScriptedModel::start().await;
    primary.push(Step::status(500));
    let backup = ScriptedModel::start().await;
    backup.push(Step::text("backup here"));
    let config = format!(
        "{}{}{AGENT}",
        provider("primary", &primary.url(), "fallbacks = [\"backup\"]"),
        provider("backup", &backup.url(), "")
    );
    let sandbox = Sandbox::new(&config);
    let mut chat = sandbox.chat(&[]);
    chat.send("hello?");
    chat.expect("main> backup here", 20);
    chat.finish();
    assert_eq!(primary.requests().len(), 1);
    assert_eq!(backup.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_server_down_is_a_clear_error_and_the_chat_goes_on() {
    // Port 9 (discard) has no listener on loopback: connection refused.
    let config = format!("{}{AGENT}", provider("primary", "http://127.0.0.1:9/v1", ""));
    let sandbox = Sandbox::new(&config);
    let mut chat = sandbox.chat(&[]);
    chat.send("anyone?");
    let line = chat.expect("error:", 20);
    assert_eq!(
        line,
        "error: model provider 'primary' could not be reached (is the model server running? check [providers.primary].base_url)"
    );
    chat.send("/status");
    chat.expect("model: primary (primary-model)", 5);
    chat.finish();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_agent_is_refused_with_the_list() {
    let model = ScriptedModel::start().await;
    let sandbox = Sandbox::new(&format!("{}{AGENT}", provider("primary", &model.url(), "")));
    let (code, _out, err) = sandbox.run(&["chat", "--config", "switchboard.toml", "--agent", "ghost"]);
    assert_ne!(code, 0);
    assert!(
        err.contains("unknown or disabled agent 'ghost'; available agents: main"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spawned_sessions_announcement_is_printed_in_the_terminal() {
    let model = ScriptedModel::start().await;
    model.push(Step::tool_call(
        "sessions_spawn",
        json!({"task": "count the files", "label": "counter"}),
    ));
    model.push(Step::text("Started a helper.").when_last_contains("accepted"));
    model.push(
        Step::text("3 files")
            .when_last_contains("count the files")
            .delay(std::time::Duration::from_millis(200)),
    );
    model.push(Step::text("There are 3 files.").when_last_contains("Write the announcement"));
    let config = format!("{}{AGENT}", provider("primary", &model.url(), ""))
        .replace("auto_approve = [", "auto_approve = [\"sessions_spawn\", ");
    let sandbox = Sandbox::new(&config);
    let mut chat = sandbox.chat(&[]);
    chat.send("count files in the background");
    chat.expect("main> Started a helper.", 20);
    chat.expect_anywhere("[announcement]", 20);
    chat.expect_anywhere("Status: success", 5);
    chat.expect_anywhere("Result: There are 3 files.", 5);
    chat.send("/subagents list");
    let line = chat.expect("#1 ", 5);
    assert!(
        line.contains(" • counter • main • primary-model • ") && line.contains(" • completed • count the files"),
        "{line}"
    );
    chat.finish();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn console_in_the_terminal_gives_its_person_a_sign_in_link() {
    let model = ScriptedModel::start().await;
    // The terminal's person is `cli:<USER>`; the sandbox runs it as `tester`.
    let login = "tester";
    let sandbox = Sandbox::new(&format!(
        "{}{AGENT}[web]\nlisten = \"127.0.0.1:18099\"\nconsole = true\nconsole_users = [\"cli:{login}\"]\n",
        provider("primary", &model.url(), "")
    ));
    let mut chat = sandbox.chat(&[]);
    chat.send("/console");
    let line = chat.expect("/console/signin#", 20);
    assert!(line.contains("http://127.0.0.1:18099/console/signin#"), "{line}");
    let (code, _) = chat.finish();
    assert_eq!(code, 0);

    let other = Sandbox::new(&format!(
        "{}{AGENT}[web]\nlisten = \"127.0.0.1:18098\"\nconsole = true\nconsole_users = [\"cli:someone-else\"]\n",
        provider("primary", &model.url(), "")
    ));
    let mut chat = other.chat(&[]);
    chat.send("/console");
    chat.expect(&format!("cli:{login} may not use the operator console"), 20);
    assert_eq!(model.requests().len(), 0, "commands never reach the model");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_terminal_shows_a_streamed_answer_once_and_only_adds_what_the_end_changes() {
    let model = ScriptedModel::start().await;
    model.push(Step::text("one two three four").streamed(std::time::Duration::from_millis(50)));
    model.push(
        Step::text("a long story that stops")
            .cut_off()
            .streamed(std::time::Duration::from_millis(20)),
    );
    let sandbox = Sandbox::new(&format!("{}{AGENT}", provider("primary", &model.url(), "")));
    let mut chat = sandbox.chat(&[]);
    chat.send("count");
    chat.expect("main> one two three four", 20);
    chat.send("tell a story");
    chat.expect("main> a long story that stops", 20);
    chat.expect("cut off", 20);
    let mut all = chat.seen.clone();
    let (code, rest) = chat.finish();
    assert_eq!(code, 0);
    all.extend(rest);
    assert_eq!(
        all.iter().filter(|l| l.contains("one two three four")).count(),
        1,
        "{all:?}"
    );
    assert_eq!(all.iter().filter(|l| l.contains("a long story")).count(), 1, "{all:?}");
    assert!(model.requests().iter().all(|r| r["stream"] == json!(true)));
}
