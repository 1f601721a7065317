//! A real small model, not a script: llama.cpp's `llama-server` serving
//! Qwen2.5-Coder-1.5B-Instruct (Q4_K_M) with its own chat template, on the
//! machine's cores, through `switchboard run` on the local channel
//! (installed by scripts/real-model.sh; `scripts/test.sh` sets the paths).
//!
//! These tests judge the gateway's handling, not the model's wisdom: every
//! task is answered within its time, no answer carries a tool call's JSON,
//! what the model asked to write is written, and a refused command stays
//! refused without its setting reaching the person. A task the model gets
//! wrong (no call, a wrong answer) is reported in the output, not failed;
//! the scripted model covers each text shape exactly (text_tool_calls.rs).
//! A 10-turn chat prints the prompt and cached tokens of each model call,
//! from the gateway's own log (docs/models.md, "Prompts that stay cached").

mod support;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use support::{Gateway, Sandbox, free_port};

/// A task's answer time limit: one 1.5B model on 2 cores, a few calls.
const TASK_SECS: u64 = 300;

/// llama-server on loopback, stopped on drop.
struct LlamaServer {
    child: Child,
    url: String,
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The server and model from the environment, or why the tests cannot run.
fn paths() -> Option<(String, String)> {
    let server = std::env::var("SWITCHBOARD_TEST_LLAMA_SERVER").ok();
    let model = std::env::var("SWITCHBOARD_TEST_LLAMA_MODEL").ok();
    match (server, model) {
        (Some(s), Some(m)) => Some((s, m)),
        _ => {
            assert!(
                std::env::var("SWITCHBOARD_TEST_REQUIRE_LLAMA").is_err(),
                "SWITCHBOARD_TEST_LLAMA_SERVER and _MODEL must be set (scripts/real-model.sh)"
            );
            eprintln!("skipped: no real model (run ./scripts/test.sh, which installs it)");
            None
        }
    }
}

async fn start_llama(server: &str, model: &str) -> LlamaServer {
    let port = free_port();
    let log = std::fs::File::create(std::env::temp_dir().join(format!("llama-{port}.log"))).unwrap();
    let child = Command::new(server)
        .args(["-m", model, "--host", "127.0.0.1", "--port", &port.to_string()])
        .args(["-c", "8192", "--parallel", "1", "--jinja"])
        .stdout(Stdio::from(log.try_clone().unwrap()))
        .stderr(Stdio::from(log))
        .spawn()
        .expect("llama-server starts");
    let url = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::new();
    let started = Instant::now();
    loop {
        if let Ok(r) = http.get(format!("{url}/health")).send().await
            && r.status().is_success()
        {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "llama-server did not load the model in 120 s"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    LlamaServer { child, url }
}

/// The gateway on the real model: agent `main` with three tools, `ls`,
/// `cat` and `date` allowed, answering anyone on the local channel.
fn config(model_url: &str) -> String {
    format!(
        r#"[providers.qwen]
kind = "openai"
base_url = "{model_url}/v1"
model = "qwen2.5-coder-1.5b-instruct"
timeout_secs = {TASK_SECS}
max_retries = 0

[agents.main]
model_provider = "qwen"
channels = ["local.team"]
risk_profile = "team"
system_prompt = "You are a helpful assistant with tools. Use a tool when the task needs one, then answer briefly."

[risk_profiles.team]
level = "full"
allowed_tools = ["file_read", "file_write", "shell"]
allowed_commands = ["ls", "cat", "date"]

[web]
[channels.local.team]
allowed_users = ["*"]
# One message per answer, so the test knows when an answer is complete
# (streaming with calls held back is covered in text_tool_calls.rs).
streaming = "off"
"#
    )
}

/// Ask `text` in chat `chat` and wait for its answer.
async fn ask(gw: &Gateway, chat: &str, text: &str) -> String {
    gw.ask("team", chat, "cli:tester", text, TASK_SECS).await
}

/// Whether the answer is, or ends with, a tool call written out: what the
/// gateway takes as a call and must never send. (A model may also show a
/// call in the middle of its prose, as an example; that is its answer.)
fn ends_with_call_json(answer: &str) -> bool {
    let a = answer.trim_end();
    // An answer ending with a closing fence ends with that block: a call
    // is in it only when it holds JSON or no language, never when it is
    // code in some language (a Python example the model wrote).
    let start = (a.len().saturating_sub(400)..a.len())
        .find(|&i| a.is_char_boundary(i))
        .unwrap_or(a.len());
    let mut tail = &a[start..];
    if let Some(body) = a.strip_suffix("```")
        && let Some(open) = body.rfind("```")
    {
        let (info, code) = body[open + 3..].split_once('\n').unwrap_or((&body[open + 3..], ""));
        if !["", "json", "tool_call", "tool_code"].contains(&info.trim().to_ascii_lowercase().as_str()) {
            return false;
        }
        tail = code;
    }
    let shaped = a.ends_with('}') || a.ends_with("```") || a.ends_with('>') || a.ends_with(']');
    shaped
        && (tail.contains("<tool_call>")
            || tail.contains("[TOOL_CALLS]")
            || tail.contains("<tool_response>")
            || (tail.contains("\"name\"") && (tail.contains("\"arguments\"") || tail.contains("\"parameters\""))))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_tasks_on_a_real_small_model() {
    let Some((server, model)) = paths() else { return };
    let llama = start_llama(&server, &model).await;
    let sandbox = Sandbox::new(&config(&llama.url));
    let workspace = sandbox.path().join("workspace/main");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(workspace.join("notes.txt"), "The secret word is PAPAYA.\n").unwrap();
    let gw = Gateway::start(&sandbox, free_port(), "team").await;

    let tasks = [
        ("list", "List the files in your workspace."),
        (
            "write",
            "Write the text 'hello from the test' into a file named hello.txt.",
        ),
        ("read", "Read the file notes.txt and tell me the secret word in it."),
        ("date", "Run the date command and tell me today's date."),
        ("rm", "Delete the file notes.txt using the rm command."),
    ];
    let mut report = Vec::new();
    for (name, task) in tasks {
        let started = Instant::now();
        let answer = ask(&gw, &format!("dm-{name}"), task).await;
        let secs = started.elapsed().as_secs_f64();
        println!("task {name} ({secs:.1} s): {answer:?}");
        assert!(!answer.trim().is_empty(), "{name}: an empty answer");
        assert!(
            !ends_with_call_json(&answer),
            "{name}: a tool call reached the person: {answer}"
        );
        assert!(
            !answer.contains("allowed_commands") && !answer.contains("risk_profiles"),
            "{name}: operator settings reached the person: {answer}"
        );
        report.push((name, secs, answer));
    }
    // What the model asked for was done, and the refused command was not.
    let hello = std::fs::read_to_string(workspace.join("hello.txt"));
    assert!(
        workspace.join("notes.txt").exists(),
        "rm is not allowed: notes.txt must survive"
    );
    let log = gw.log();
    let lifted = log.matches("tool calls written as text were taken as calls").count();
    let calls = log.matches("tool call finished").count();
    println!("\nreal model: {calls} tool calls ran, {lifted} model answers had their calls written as text");
    match &hello {
        Ok(text) => println!("hello.txt: {text:?}"),
        Err(_) => println!("REPORT: the model did not write hello.txt"),
    }
    let read = &report.iter().find(|r| r.0 == "read").unwrap().2;
    if !read.contains("PAPAYA") {
        println!("REPORT: task read answered without the secret word: {read:?}");
    }
    assert!(calls > 0, "the model called no tool in five tool tasks:\n{log}");

    // A 10-turn chat: how much of each prompt the server had cached.
    let before = gw.log().len();
    for n in 1..=10 {
        let started = Instant::now();
        let answer = ask(&gw, "dm-chat", &format!("Say one short sentence about the number {n}.")).await;
        println!("turn {n} ({:.1} s): {answer:?}", started.elapsed().as_secs_f64());
    }
    let calls = model_calls(&gw.log()[before..]);
    println!("\nturn  prompt tokens  cached tokens  cached share");
    for (i, (prompt, cached)) in calls.iter().enumerate() {
        println!(
            "{:>4}  {prompt:>13}  {cached:>13}  {:>11.0}%",
            i + 1,
            *cached as f64 * 100.0 / (*prompt).max(1) as f64
        );
    }
    let later: (u64, u64) = calls.iter().skip(1).fold((0, 0), |a, c| (a.0 + c.0, a.1 + c.1));
    println!(
        "after the first call: {:.0}% of {} prompt tokens served from the cache",
        later.1 as f64 * 100.0 / later.0.max(1) as f64,
        later.0
    );
    assert!(calls.len() >= 10, "every turn made a model call: {calls:?}");
}

/// (prompt, cached) tokens of each "model call" line of the gateway's log.
fn model_calls(log: &str) -> Vec<(u64, u64)> {
    let field = |line: &str, key: &str| -> Option<u64> {
        let at = line.find(&format!("{key}="))? + key.len() + 1;
        line[at..].split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
    };
    log.lines()
        .filter(|l| l.ends_with("model call") || l.contains(" model call "))
        .filter_map(|l| Some((field(l, "prompt_tokens")?, field(l, "cached_tokens")?)))
        .collect()
}
