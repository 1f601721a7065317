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

/// The processes whose working folder is `dir`.
pub(crate) fn processes_in(dir: &Path) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_string_lossy().parse::<i32>().ok()?;
            let cwd = std::fs::read_link(entry.path().join("cwd")).ok()?;
            (cwd == dir).then_some(pid)
        })
        .collect()
}

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
