//! MCP tools under the same gate as every tool, through `switchboard run`:
//! the time server (PyPI) behind an ops-room approval and `allowed_tools`;
//! a server that never answers `initialize`, and one that describes a tool
//! badly, fail with clear words and cost nothing else.

mod support;

use serde_json::{Value, json};
use support::mcp::{offered_names, time_python};
use support::{Gateway, Sandbox, free_port, main_agent_on};
use switchboard_test_support::{ScriptedModel, Step, tool_results};

fn with_servers(head: String, servers: &str) -> String {
    head.replacen(
        "[agents.main]\n",
        &format!("[agents.main]\nmcp_servers = [{servers}]\n"),
        1,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_time_server_call_waits_for_an_approver_and_allowed_tools_hides_the_rest() {
    let Some(python) = time_python() else { return };
    let base = std::path::Path::new(&python)
        .ancestors()
        .nth(2)
        .expect("the virtualenv")
        .display()
        .to_string();
    let prefix = std::process::Command::new(&python)
        .args(["-c", "import sys; print(sys.base_prefix)"])
        .output()
        .expect("python");
    let prefix = String::from_utf8_lossy(&prefix.stdout).trim().to_string();
    let model = ScriptedModel::start().await;
    let port = free_port();
    let route = switchboard_test_support::config::ops_route("cli:alice");
    let config = format!(
        r#"{head}[risk_profiles.default]
level = "supervised"
allowed_tools = ["time.get_current_time", "memory_recall"]
{route}timeout_secs = 60
[channels.local.team]
allowed_users = ["cli:bob"]
[channels.local.ops]
allowed_users = ["cli:alice", "cli:mallory"]
rooms = {{ "ops-room" = "room-1" }}
[mcp_servers.time]
command = "{python}"
args = ["-m", "mcp_server_time", "--local-timezone", "UTC"]
read_paths = ["{base}", "{prefix}"]
"#,
        head = with_servers(main_agent_on(&model.url(), port, "local.team"), "\"time\"")
    );
    let sandbox = Sandbox::new(&config);
    let gw = Gateway::start(&sandbox, port, "team").await;
    model.push(Step::tool_call(
        "time__get_current_time",
        json!({"timezone": "Europe/Paris"}),
    ));
    model.push(Step::text("It is late.").when_last_contains("Europe/Paris"));
    let (mut team, mut ops) = (0, 0);
    gw.send(
        "team",
        "general",
        "cli:bob",
        "@bot what time is it in Paris?",
        true,
        false,
    )
    .await;
    let prompt = gw
        .wait_for("ops", &mut ops, 30, |e| e["kind"] == "approval_prompt")
        .await;
    let text = prompt["text"].as_str().unwrap();
    assert!(text.contains("tool: time.get_current_time"), "{text}");
    assert!(text.contains("Europe/Paris"), "the arguments are shown: {text}");
    assert!(text.contains("high"), "MCP tools are high risk by default: {text}");
    let id = prompt["approval_id"].as_str().unwrap().to_string();

    gw.press("ops", "room-1", "cli:mallory", &id, "allow_once").await;
    let refusal = gw.wait_for("ops", &mut ops, 10, |e| e["kind"] == "message").await;
    assert!(
        refusal["text"]
            .as_str()
            .unwrap()
            .starts_with("cli:mallory may not decide"),
        "{refusal}"
    );
    assert_eq!(model.requests().len(), 1, "not run on a non-approver's press");

    gw.press("ops", "room-1", "cli:alice", &id, "allow_once").await;
    let reply = gw.wait_for("team", &mut team, 30, |e| e["kind"] == "message").await;
    assert_eq!(reply["text"], "It is late.");
    let requests = model.requests();
    let result: Value = serde_json::from_str(&tool_results(&requests[1])[0]).expect("the server's JSON");
    assert_eq!(result["timezone"], "Europe/Paris");
    let names = offered_names(&requests[0]);
    assert!(names.contains(&"time__get_current_time".to_string()), "{names:?}");
    assert!(
        !names.contains(&"time__convert_time".to_string()),
        "allowed_tools hides it: {names:?}"
    );
    assert!(!names.contains(&"shell".to_string()), "{names:?}");
}

/// A stdio server that lists one good tool and one whose schema is not a
/// JSON object (written here: no published server is broken on purpose).
const ODD_SERVER: &str = r#"
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    mid, method = msg.get("id"), msg.get("method")
    if mid is None:
        continue
    if method == "initialize":
        res = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
               "serverInfo": {"name": "odd", "version": "1"}}
    elif method == "tools/list" and sys.argv[1:] == ["mute"]:
        continue
    elif method == "tools/list":
        res = {"tools": [
            {"name": "good", "description": "Says ok", "inputSchema": {"type": "object", "properties": {}}},
            {"name": "bad", "description": "Broken", "inputSchema": "not a schema"}]}
    elif method == "tools/call":
        res = {"content": [{"type": "text", "text": "ok from " + msg["params"]["name"]}]}
    else:
        res = {}
    print(json.dumps({"jsonrpc": "2.0", "id": mid, "result": res}), flush=True)
# Deaf to the end of its input: only the kernel stops it once the gateway is gone.
import time
time.sleep(600)
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_server_times_out_and_a_bad_tool_is_skipped() {
    let model = ScriptedModel::start().await;
    let port = free_port();
    let head = with_servers(
        main_agent_on(&model.url(), port, "local.team"),
        "\"silent\", \"odd\", \"mute\"",
    );
    let scripts = tempfile::tempdir().unwrap();
    let odd = scripts.path().join("odd.py");
    std::fs::write(&odd, ODD_SERVER).unwrap();
    let config = format!(
        r#"{head}[risk_profiles.default]
level = "full"
[channels.local.team]
allowed_users = ["*"]
[mcp_servers.silent]
command = "/usr/bin/python3"
args = ["-c", "import time; time.sleep(120)"]
startup_timeout_secs = 2
[mcp_servers.odd]
command = "/usr/bin/python3"
args = ["{odd}"]
read_paths = ["{dir}"]
[mcp_servers.mute]
command = "/usr/bin/python3"
args = ["{odd}", "mute"]
read_paths = ["{dir}"]
startup_timeout_secs = 2
"#,
        odd = odd.display(),
        dir = scripts.path().display()
    );
    let sandbox = Sandbox::new(&config);
    let mut gw = Gateway::start(&sandbox, port, "team").await;
    model.push(Step::tool_call("odd__good", json!({})));
    model.push(Step::text("fine"));
    let mut cursor = 0;
    gw.send("team", "c1", "cli:ann", "go", false, true).await;
    gw.wait_for("team", &mut cursor, 30, |e| e["text"].as_str() == Some("fine"))
        .await;
    let requests = model.requests();
    assert_eq!(tool_results(&requests[1]), ["ok from good"]);
    let names = offered_names(&requests[0]);
    assert!(
        !names
            .iter()
            .any(|n| n.starts_with("odd__bad") || n.starts_with("silent__")),
        "{names:?}"
    );
    let log = gw.log();
    assert!(
        log.contains("an MCP tool was skipped: its description is malformed"),
        "{log}"
    );
    assert!(log.contains("bad: inputSchema is not a JSON object"), "{log}");

    let text = support::mcp::tools_listing(&gw, &mut cursor).await;
    assert!(text.contains("- odd.good — risk high; MCP server odd"), "{text}");
    assert!(
        text.contains("MCP server silent is unavailable: the MCP server 'silent' did not answer initialize within 2s (startup_timeout_secs)"),
        "{text}"
    );
    assert!(
        text.contains("MCP server mute is unavailable: the MCP server 'mute' did not list its tools: no answer to tools/list within 2s"),
        "{text}"
    );

    // `check --probe` says the same and fails.
    let out = std::process::Command::new(support::binary())
        .args(["check", "--probe", "--config"])
        .arg(sandbox.path().join("switchboard.toml"))
        .current_dir(sandbox.path())
        .output()
        .expect("switchboard check");
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{printed}");
    assert!(printed.contains("mcp server odd: ok, 1 tool(s)"), "{printed}");
    assert!(printed.contains("odd.good — risk high: Says ok"), "{printed}");
    assert!(
        printed.contains(
            "mcp server silent (/usr/bin/python3): FAILED: the MCP server 'silent' did not answer initialize within 2s"
        ),
        "{printed}"
    );

    // The gateway killed outright (no destructor runs): the server, deaf to
    // its input closing, dies with it all the same.
    let odd_dir = sandbox.path().join("workspace/.mcp/odd").canonicalize().unwrap();
    assert!(!support::mcp::processes_in(&odd_dir).is_empty(), "the odd server runs");
    gw.kill();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !support::mcp::processes_in(&odd_dir).is_empty() && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(
        support::mcp::processes_in(&odd_dir),
        Vec::<i32>::new(),
        "the server outlived the gateway"
    );
}
