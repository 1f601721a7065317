//! The MCP servers the MCP tests run (installed by `scripts/test.sh`), and
//! what those tests look at: offered tool specs, server processes.

use super::Gateway;
use serde_json::Value;
use std::path::Path;

pub(crate) use super::free_port;

fn required() -> bool {
    std::env::var("SWITCHBOARD_TEST_REQUIRE_MCP").is_ok_and(|v| v == "1")
}

/// An installed peer named by `var`, or `None` (the test is skipped) when
/// it is not installed and not required.
fn peer(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(p) if Path::new(&p).exists() => Some(p),
        _ if required() => panic!("{var} is not set to an installed server; run ./scripts/test.sh"),
        _ => {
            eprintln!("skipped: {var} is not set (./scripts/test.sh installs the MCP servers)");
            None
        }
    }
}

/// `dist/index.js` of `@modelcontextprotocol/server-everything`.
pub(crate) fn everything() -> Option<String> {
    peer("SWITCHBOARD_TEST_MCP_EVERYTHING")
}

/// The Python of the virtualenv holding `mcp-server-time`.
pub(crate) fn time_python() -> Option<String> {
    peer("SWITCHBOARD_TEST_MCP_TIME_PYTHON")
}

/// The function spec named `name` among the tools a model request offered.
pub(crate) fn offered(request: &Value, name: &str) -> Value {
    request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| &t["function"])
        .find(|f| f["name"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("{name} was not offered: {}", request["tools"]))
}

/// Names of every tool a model request offered.
pub(crate) fn offered_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect()
}

/// Wait until something accepts connections on `port`.
pub(crate) async fn wait_http(port: u16) {
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("nothing listens on port {port}");
}

/// The processes whose `/proc/<pid>` folder `pick` accepts.
pub(crate) fn processes_where(pick: impl Fn(&Path) -> bool) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_string_lossy().parse::<i32>().ok()?;
            pick(&entry.path()).then_some(pid)
        })
        .collect()
}

/// The processes whose working folder is `dir`.
pub(crate) fn processes_in(dir: &Path) -> Vec<i32> {
    processes_where(|proc_dir| std::fs::read_link(proc_dir.join("cwd")).is_ok_and(|cwd| cwd == dir))
}

/// The "everything" server (`dist`) serving streamable HTTP on `port`,
/// once it accepts connections.
pub(crate) async fn everything_over_http(dist: &str, port: u16) -> tokio::process::Child {
    let server = tokio::process::Command::new("node")
        .args([dist, "streamableHttp"])
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("node");
    wait_http(port).await;
    server
}

/// The loop of a small stdio MCP server written in Python for a test: a
/// script defines `tools()` (the list) and `call(name)` (a result, and a
/// notification to send after it or None), then calls `serve(name)`.
pub(crate) const PY_SERVE: &str = r#"
import json, sys
def serve(name):
    for line in sys.stdin:
        msg = json.loads(line)
        mid, method = msg.get("id"), msg.get("method")
        if mid is None:
            continue
        after = None
        if method == "initialize":
            res = {"protocolVersion": msg["params"]["protocolVersion"],
                   "capabilities": {"tools": {"listChanged": True}}, "serverInfo": {"name": name, "version": "1"}}
        elif method == "tools/list":
            res = {"tools": tools()}
        elif method == "tools/call":
            res, after = call(msg["params"]["name"])
        else:
            res = {}
        print(json.dumps({"jsonrpc": "2.0", "id": mid, "result": res}), flush=True)
        if after:
            print(json.dumps(after), flush=True)
"#;

/// SIGKILL every process whose working folder is `dir`; how many.
pub(crate) fn kill_processes_in(dir: &Path) -> usize {
    processes_in(dir)
        .into_iter()
        .filter(|pid| {
            let status = std::process::Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status();
            status.is_ok_and(|s| s.success())
        })
        .count()
}

/// Type `/tools` in chat `c1` of the local channel `team` as `cli:ann`; the listing.
pub(crate) async fn tools_listing(gw: &Gateway, cursor: &mut u64) -> String {
    gw.send("team", "c1", "cli:ann", "/tools", false, true).await;
    let listing = gw
        .wait_for("team", cursor, 20, |e| {
            e["text"].as_str().is_some_and(|t| t.starts_with("Tools of main"))
        })
        .await;
    listing["text"].as_str().unwrap_or_default().to_string()
}
