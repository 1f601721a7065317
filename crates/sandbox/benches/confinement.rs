//! What confinement costs (`cargo bench -p switchboard-sandbox`): the time
//! to run `true` unconfined and confined (each network mode), and a 4 KiB
//! file read the way `file_read` did it before (tokio::fs) and now (a
//! thread confined to the workspace), and a stdio tool server's start (a
//! python3 answering one JSON-RPC line, as MCP servers answer
//! `initialize`) unconfined and confined. Prints p50/p99 over N runs and the
//! added cost; targets: ≤ 2 ms per command, ≤ 0.2 ms per file operation.

use std::time::{Duration, Instant};
use switchboard_sandbox::fs::{Access, confined};
use switchboard_sandbox::{Network, Sandbox, Settings, Support};

const RUNS: usize = 300;

fn percentiles(mut v: Vec<Duration>) -> (f64, f64) {
    v.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    (ms(v[v.len() / 2]), ms(v[v.len() * 99 / 100]))
}

async fn run_true(ws: &std::path::Path, network: Option<Network>) -> Duration {
    let sandbox = Sandbox::new(Settings::default());
    let started = Instant::now();
    let mut cmd = tokio::process::Command::new("/usr/bin/true");
    cmd.current_dir(ws).env_clear().process_group(0).kill_on_drop(true);
    let guard = network.map(|n| {
        let mut c = sandbox.confine(ws, n).expect("this kernel confines");
        c.apply(&mut cmd);
        c
    });
    let status = cmd.status().await.expect("true runs");
    assert!(status.success());
    drop(guard);
    started.elapsed()
}

/// A stdio tool server's start: spawn a python3 that answers one JSON-RPC
/// line (as an MCP server answers `initialize`), confined as MCP servers
/// are or not, until its answer is read.
async fn stdio_server_answer(ws: &std::path::Path, confine: bool) -> Duration {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    const SERVER: &str = "import json,sys\nm=json.loads(sys.stdin.readline())\nprint(json.dumps({'jsonrpc':'2.0','id':m['id'],'result':{}}),flush=True)\n";
    let sandbox = Sandbox::new(Settings::default());
    let started = Instant::now();
    let mut cmd = tokio::process::Command::new("python3");
    cmd.args(["-c", SERVER])
        .current_dir(ws)
        .env_clear()
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true);
    let guard = confine.then(|| {
        let mut c = sandbox.confine(ws, Network::None).expect("this kernel confines");
        c.die_with_gateway();
        c.apply(&mut cmd);
        c
    });
    let mut child = cmd.spawn().expect("python3 runs");
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}\n")
        .await
        .unwrap();
    let mut line = String::new();
    tokio::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .await
        .unwrap();
    assert!(line.contains("\"id\": 1"), "{line}");
    let took = started.elapsed();
    drop(stdin);
    let _ = child.wait().await;
    drop(guard);
    took
}

async fn read_before(path: &std::path::Path) -> Duration {
    use tokio::io::AsyncReadExt;
    let started = Instant::now();
    let file = tokio::fs::File::open(path).await.unwrap();
    let _ = file.metadata().await.unwrap();
    let mut bytes = Vec::new();
    file.take(256 * 1024 + 1).read_to_end(&mut bytes).await.unwrap();
    assert_eq!(bytes.len(), 4096);
    started.elapsed()
}

async fn read_confined(ws: &std::path::Path, path: &std::path::Path) -> Duration {
    let started = Instant::now();
    let p = path.to_path_buf();
    let bytes = confined(ws, Access::Read, move || std::fs::read(p)).await.unwrap();
    assert_eq!(bytes.len(), 4096);
    started.elapsed()
}

#[tokio::main]
async fn main() {
    let support = Support::get();
    println!(
        "confinement cost, {RUNS} runs each (Landlock ABI {}, namespaces {}, pids cgroup {})",
        support.landlock_abi,
        support.namespaces,
        support
            .layers()
            .iter()
            .any(|l| l.name == "process-limit" && l.detail.contains("cgroup"))
    );
    let ws = tempfile::tempdir().unwrap();
    let mut rows = Vec::new();
    for (name, network) in [
        ("true, unconfined", None),
        ("true, confined, network none", Some(Network::None)),
        ("true, confined, network loopback", Some(Network::Loopback)),
        ("true, confined, network any", Some(Network::Any)),
    ] {
        let _ = run_true(ws.path(), network).await; // warm up
        let mut times = Vec::with_capacity(RUNS);
        for _ in 0..RUNS {
            times.push(run_true(ws.path(), network).await);
        }
        rows.push((name, percentiles(times)));
    }
    let file = ws.path().join("four-k.txt");
    std::fs::write(&file, vec![b'x'; 4096]).unwrap();
    let mut before = Vec::with_capacity(RUNS);
    let mut after = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        before.push(read_before(&file).await);
        after.push(read_confined(ws.path(), &file).await);
    }
    rows.push(("file_read 4 KiB, tokio::fs (before)", percentiles(before)));
    rows.push(("file_read 4 KiB, confined thread (now)", percentiles(after)));
    for (name, confine) in [
        ("stdio server's first answer, unconfined", false),
        ("stdio server's first answer, confined", true),
    ] {
        let _ = stdio_server_answer(ws.path(), confine).await;
        let mut times = Vec::with_capacity(RUNS / 6);
        for _ in 0..RUNS / 6 {
            times.push(stdio_server_answer(ws.path(), confine).await);
        }
        rows.push((name, percentiles(times)));
    }
    println!("{:<42} {:>9} {:>9}", "", "p50 ms", "p99 ms");
    for (name, (p50, p99)) in &rows {
        println!("{name:<42} {p50:>9.3} {p99:>9.3}");
    }
    let base = rows[0].1.0;
    for (name, (p50, _)) in &rows[1..4] {
        println!(
            "added by confinement ({name}): {:+.3} ms at p50 (target ≤ 2 ms)",
            p50 - base
        );
    }
    println!(
        "added per file operation: {:+.3} ms at p50 (target ≤ 0.2 ms)",
        rows[5].1.0 - rows[4].1.0
    );
    println!(
        "added to a stdio server's start: {:+.3} ms at p50",
        rows[7].1.0 - rows[6].1.0
    );
}
