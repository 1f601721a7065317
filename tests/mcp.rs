//! MCP tool servers nobody here wrote, through `switchboard run`: the
//! reference "everything" server (npm) over stdio, kernel-confined, and
//! over streamable HTTP. The time server (PyPI) behind an ops-room
//! approval, and servers that hang or describe a tool badly, are in
//! `mcp_gate.rs`. `scripts/test.sh` installs both servers.

mod support;

use serde_json::{Value, json};
use std::time::Duration;
use support::mcp::{everything, free_port, offered};
use support::{Gateway, Sandbox, main_agent_on};
use switchboard_test_support::{ScriptedModel, Step, tool_results};

/// A full-autonomy agent using the server `server` configured by `table`.
async fn start(table: &str) -> (ScriptedModel, Sandbox, Gateway) {
    let model = ScriptedModel::start().await;
    let port = free_port();
    let head = main_agent_on(&model.url(), port, "local.team").replacen(
        "[agents.main]\n",
        "[agents.main]\nmcp_servers = [\"everything\"]\nvision = true\n",
        1,
    );
    let config = format!(
        "{head}[risk_profiles.default]\nlevel = \"full\"\n[channels.local.team]\nallowed_users = [\"*\"]\n{table}"
    );
    let sandbox = Sandbox::new(&config);
    let gw = Gateway::start(&sandbox, port, "team").await;
    (model, sandbox, gw)
}

fn stdio_table(dist: &str) -> String {
    let folder = std::path::Path::new(dist)
        .ancestors()
        .nth(4)
        .expect("node_modules' parent")
        .display()
        .to_string();
    format!(
        "[mcp_servers.everything]\ncommand = \"node\"\nargs = [\"{dist}\", \"stdio\"]\nread_paths = [\"{folder}\"]\ntimeout_secs = 60\n"
    )
}

/// One turn whose model makes `calls` and then says "done"; the tool
/// results it was given.
async fn turn(model: &ScriptedModel, gw: &Gateway, cursor: &mut u64, calls: Vec<(&str, Value)>) -> Vec<String> {
    let n = calls.len();
    for (tool, args) in calls {
        model.push(Step::tool_call(tool, args));
    }
    model.push(Step::text("done"));
    gw.send("team", "c1", "cli:ann", "go", false, true).await;
    gw.wait_for("team", cursor, 60, |e| e["text"].as_str() == Some("done"))
        .await;
    // The last request holds every tool result so far; this turn's are last.
    let all = tool_results(model.requests().last().unwrap());
    all[all.len() - n..].to_vec()
}

/// One turn that calls the server's `echo` with `message`; its result.
async fn echo(model: &ScriptedModel, gw: &Gateway, cursor: &mut u64, message: &str) -> String {
    let results = turn(
        model,
        gw,
        cursor,
        vec![("everything__echo", json!({ "message": message }))],
    )
    .await;
    results.concat()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_confined_stdio_server_lists_calls_and_returns_pictures() {
    let Some(dist) = everything() else { return };
    let (model, sandbox, gw) = start(&stdio_table(&dist)).await;
    let mut cursor = 0;
    let results = turn(
        &model,
        &gw,
        &mut cursor,
        vec![
            ("everything__echo", json!({"message": "hello from the gateway"})),
            ("everything__get-sum", json!({"a": 2, "b": 40})),
            ("everything__get-tiny-image", json!({})),
            ("everything__get-sum", json!({})),
        ],
    )
    .await;
    assert_eq!(results[0], "Echo: hello from the gateway", "{results:?}");
    assert!(results[1].contains("42"), "{}", results[1]);
    let saved = results[2]
        .split("[saved as ")
        .nth(1)
        .and_then(|r| r.split(']').next())
        .unwrap_or_else(|| panic!("no picture saved: {}", results[2]));
    let picture = std::fs::read(sandbox.path().join("workspace/main").join(saved)).expect("saved picture");
    assert!(picture.starts_with(b"\x89PNG"), "not a PNG");
    // A vision agent is shown it with the next model call, once.
    let shown = |r: &Value| r.to_string().matches("data:image/png;base64,").count();
    let requests = model.requests();
    assert_eq!(shown(&requests[2]), 0);
    assert_eq!(shown(&requests[3]), 1, "{}", requests[3]);
    assert_eq!(shown(&requests[4]), 0, "shown once, not with every later call");
    // The server has more than 8 tools: offered by name until called, so a
    // call without its arguments is told the schema.
    assert!(results[3].contains("needs the arguments a, b"), "{}", results[3]);

    let requests = model.requests();
    let first = offered(&requests[0], "everything__get-sum");
    assert_eq!(first["parameters"]["properties"], json!({}), "offered by name first");
    assert!(
        first["description"]
            .as_str()
            .unwrap()
            .contains("[MCP server everything")
    );
    let later = offered(requests.last().unwrap(), "everything__get-sum");
    assert!(
        later["parameters"]["properties"]["a"].is_object(),
        "whole schema once called: {later}"
    );
    // The server announces a changed tool list after it starts; it was read again.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !gw.log().contains("MCP server's tool list changed") && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(gw.log().contains("MCP server's tool list changed"), "{}", gw.log());

    // `/tools` lists them with their risk and source.
    let text = support::mcp::tools_listing(&gw, &mut cursor).await;
    assert!(
        text.contains("- everything.echo — risk high; MCP server everything"),
        "{text}"
    );
    assert!(text.contains("- shell — risk by arguments; built in"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_cancels_a_long_call_and_a_killed_server_is_restarted() {
    let Some(dist) = everything() else { return };
    let (model, sandbox, gw) = start(&stdio_table(&dist)).await;
    let mut cursor = 0;
    // A 60-second operation, stopped a moment after it starts.
    model.push(Step::tool_call(
        "everything__trigger-long-running-operation",
        json!({"duration": 60, "steps": 6}),
    ));
    gw.send("team", "c1", "cli:ann", "go", false, true).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let asked = std::time::Instant::now();
    gw.send("team", "c1", "cli:ann", "/stop", false, true).await;
    gw.wait_for("team", &mut cursor, 10, |e| e["text"].as_str() == Some("(stopped)"))
        .await;
    println!("stopped {:?} after /stop", asked.elapsed());
    assert!(
        gw.log().contains("MCP call cancelled; the server was told"),
        "the server was told: {}",
        gw.log()
    );

    // A server killed in the middle of a call: the call fails, the turn goes on.
    model.push(Step::tool_call(
        "everything__trigger-long-running-operation",
        json!({"duration": 60, "steps": 6}),
    ));
    model.push(Step::text("carried on").when_last_contains("stopped during the call"));
    gw.send("team", "c1", "cli:ann", "again", false, true).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let server_dir = sandbox.path().join("workspace/.mcp/everything").canonicalize().unwrap();
    let killed = support::mcp::kill_processes_in(&server_dir);
    assert!(killed > 0, "no server process ran in {}", server_dir.display());
    gw.wait_for("team", &mut cursor, 20, |e| e["text"].as_str() == Some("carried on"))
        .await;
    // The next call starts it again.
    assert_eq!(echo(&model, &gw, &mut cursor, "back").await, "Echo: back");
    assert!(gw.log().contains("MCP server is back"), "{}", gw.log());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamable_http_server_with_a_bearer_token() {
    let Some(dist) = everything() else { return };
    let port = free_port();
    let mut server = support::mcp::everything_over_http(&dist, port).await;
    let table = format!(
        "[mcp_servers.everything]\nurl = \"http://127.0.0.1:{port}/mcp\"\nheaders = {{ Authorization = \"Bearer not-checked-by-this-server\" }}\nrisk = {{ echo = \"read\" }}\n"
    );
    let (model, _sandbox, gw) = start(&table).await;
    let mut cursor = 0;
    assert_eq!(echo(&model, &gw, &mut cursor, "over http").await, "Echo: over http");
    server.kill().await.ok();
}
