//! The wall between what a tool starts and the gateway, tried as an
//! attacker would through `switchboard run`: a prompt-injected agent at
//! risk level `full`, `python3` allowed, `network = "any"` — the broadest
//! profile an operator writes. A command re-limits and renices the gateway
//! by pid (as `prlimit` from a confined python did before), looks for the
//! local API to approve its own request (as it did over loopback TCP), and
//! an MCP server's own children must not outlive the gateway's `kill -9`.

mod support;

use serde_json::json;
use support::{Gateway, Sandbox, free_port, main_agent_on};
use switchboard_test_support::{ScriptedModel, Step, tool_results};

const BROAD: &str = "[risk_profiles.default]\nlevel = \"full\"\nblock_high_risk_commands = false\nnetwork = \"any\"\n\
    allowed_commands = [\"python3\", \"sh\", \"echo\"]\n";

/// One turn whose model writes `script` as `name` into the workspace and
/// runs `command`; the command's tool result.
async fn script_turn(model: &ScriptedModel, gw: &Gateway, name: &str, script: &str, command: &str) -> String {
    model.push(Step::tool_call(
        "file_write",
        json!({ "path": name, "content": script }),
    ));
    model.push(Step::tool_call("shell", json!({ "command": command })));
    model.push(Step::text("done"));
    let mut cursor = gw
        .events("team", 0)
        .await
        .last()
        .map_or(0, |e| e["seq"].as_u64().unwrap());
    gw.send("team", "c1", "cli:ann", "go", false, true).await;
    gw.wait_for("team", &mut cursor, 60, |e| e["text"].as_str() == Some("done"))
        .await;
    tool_results(model.requests().last().unwrap())[1].clone()
}

/// Re-limit the gateway (its pid given, and as the parent), renice it.
const ATTACK: &str = r#"
import os, resource, sys
for pid in (int(sys.argv[1]), os.getppid()):
    for name, step in [
        ("fsize", lambda: resource.prlimit(pid, resource.RLIMIT_FSIZE, (0, 0))),
        ("nofile", lambda: resource.prlimit(pid, resource.RLIMIT_NOFILE, (7, 7))),
        ("renice", lambda: os.setpriority(os.PRIO_PROCESS, pid, 19)),
    ]:
        try:
            step()
            print(pid, name, "done")
        except OSError as e:
            print(pid, name, "refused", e.strerror)
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_cannot_relimit_or_renice_the_gateway() {
    let model = ScriptedModel::start().await;
    let port = free_port();
    let config = format!(
        "{}{BROAD}[channels.local.team]\nallowed_users = [\"*\"]\n",
        main_agent_on(&model.url(), port, "local.team")
    );
    let sandbox = Sandbox::new(&config);
    let gw = Gateway::start(&sandbox, port, "team").await;
    let pid = gw.pid().unwrap();
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let result = script_turn(&model, &gw, "attack.py", ATTACK, &format!("python3 attack.py {pid}")).await;
    for step in ["fsize", "nofile", "renice"] {
        assert!(result.contains(&format!("{pid} {step} refused")), "{result}");
    }
    // Its parent is its own namespace's init, not the gateway.
    assert!(
        result.contains("\n1 fsize ") || result.starts_with("1 fsize "),
        "{result}"
    );
    assert_eq!(
        std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap(),
        limits,
        "the gateway's limits changed"
    );
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let nice = stat.rsplit(')').next().unwrap().split_whitespace().nth(16).unwrap();
    assert_eq!(nice, "0", "the gateway was reniced");
    // The gateway still writes and answers.
    let mut cursor = 0;
    model.push(Step::text("still here"));
    gw.send("team", "c1", "cli:ann", "again", false, true).await;
    gw.wait_for("team", &mut cursor, 30, |e| e["text"].as_str() == Some("still here"))
        .await;
}

/// From inside the sandbox: the gateway's TCP listener (opted in), and
/// its UNIX socket.
const KNOCK: &str = r#"
import json, socket, sys, urllib.request, urllib.error
port, path = int(sys.argv[1]), "SOCKET"
def ask(path, body=None):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body,
                                 headers={"content-type": "application/json"})
    try:
        return urllib.request.urlopen(req, timeout=5).status
    except urllib.error.HTTPError as e:
        return e.code
    except Exception as e:
        return type(e).__name__
print("healthz", ask("/healthz"))
print("events", ask("/local/team/events?after=0&wait_ms=0"))
press = {"chat": "c1", "user": "cli:alice", "approval_id": "x", "choice": "allow_once"}
print("press", ask("/local/team/press", json.dumps(press).encode()))
try:
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    print("socket connected")
except OSError as e:
    print("socket refused", e.errno)
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_local_api_is_no_door_for_a_command_with_the_network() {
    let model = ScriptedModel::start().await;
    let port = free_port();
    let config = support::with_listen(
        &format!(
            "{}{BROAD}[channels.local.team]\nallowed_users = [\"*\"]\n",
            main_agent_on(&model.url(), port, "local.team")
        ),
        port,
    );
    let sandbox = Sandbox::new(&config);
    let gw = Gateway::start(&sandbox, port, "team").await;
    let socket = sandbox.path().join("data/switchboard.sock");
    assert!(socket.exists());
    // The socket's path goes in the script: the shell's argument checks
    // would refuse it as a word (the kernel is what is tried here).
    let knock = KNOCK.replace("SOCKET", &socket.display().to_string());
    let result = script_turn(&model, &gw, "knock.py", &knock, &format!("python3 knock.py {port}")).await;
    // The listener is reachable (the network is real)...
    assert!(result.contains("healthz 200"), "{result}");
    // ...but the local API is not served there for a token-less channel,
    // and the socket cannot even be opened.
    assert!(
        result.contains("events 403") && result.contains("press 403"),
        "{result}"
    );
    assert!(result.contains("socket refused 13"), "{result}");
}

/// A stdio MCP server that, like one running `git fetch`, starts a child
/// of its own in a new session (out of its process group), then answers.
const FORKING_SERVER: &str = r#"
import subprocess
subprocess.Popen(["sleep", sys.argv[1]], start_new_session=True,
                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
def tools():
    return [{"name": "noop", "description": "Nothing", "inputSchema": {"type": "object"}}]
def call(name):
    return {"content": []}, None
serve("forks")
"#;

/// Pids of processes whose command line is `sleep <arg>`.
fn sleeping(arg: &str) -> Vec<i32> {
    let wanted = format!("sleep\0{arg}\0");
    support::mcp::processes_where(|proc_dir| {
        std::fs::read(proc_dir.join("cmdline")).is_ok_and(|c| c == wanted.as_bytes())
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_servers_children_die_with_the_gateway() {
    let model = ScriptedModel::start().await;
    let port = free_port();
    let scripts = tempfile::tempdir().unwrap();
    let server = scripts.path().join("forks.py");
    std::fs::write(&server, format!("{}{FORKING_SERVER}", support::mcp::PY_SERVE)).unwrap();
    // A duration no other process uses: how the grandchild is found.
    let arg = format!("{}.{}", 3000 + port % 1000, std::process::id());
    let config = format!(
        "{}{BROAD}[channels.local.team]\nallowed_users = [\"*\"]\n[mcp_servers.forks]\ncommand = \"/usr/bin/python3\"\nargs = [\"{}\", \"{arg}\"]\nread_paths = [\"{}\"]\n",
        main_agent_on(&model.url(), port, "local.team").replacen(
            "[agents.main]\n",
            "[agents.main]\nmcp_servers = [\"forks\"]\n",
            1
        ),
        server.display(),
        scripts.path().display()
    );
    let sandbox = Sandbox::new(&config);
    let mut gw = Gateway::start(&sandbox, port, "team").await;
    let mut cursor = 0;
    let text = support::mcp::tools_listing(&gw, &mut cursor).await;
    assert!(text.contains("forks.noop"), "{text}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while sleeping(&arg).is_empty() && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(!sleeping(&arg).is_empty(), "the server's child runs");
    gw.kill();
    let killed = std::time::Instant::now();
    while !sleeping(&arg).is_empty() && killed.elapsed() < std::time::Duration::from_secs(2) {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(
        sleeping(&arg),
        Vec::<i32>::new(),
        "the server's child outlived the gateway by 2 s"
    );
}
