//! `switchboard bench console`: how fast the operator console follows the
//! registry. With `live` runs running, each of `changes` progress writes is
//! timed from the store write to its event arriving on the browser-facing
//! SSE stream (read over loopback HTTP like a browser does); then, with
//! `tree` more runs recorded (nested four deep), the run tree page and its
//! live fragment are timed end to end (store read and HTML rendering).

use crate::common::{instant_setup, percentile};
use futures::StreamExt;
use std::process::ExitCode;
use std::time::{Duration, Instant};
use switchboard_store::{NewRun, RunKind, Store};

fn run(id: String, parent: Option<String>, root: &str, depth: i64) -> NewRun {
    NewRun {
        id: id.clone(),
        kind: if depth == 0 {
            RunKind::Delegate
        } else {
            RunKind::SpawnSubagent
        },
        parent_id: parent,
        root_id: root.to_string(),
        owner_chain: vec!["main".into()],
        depth,
        agent: "main".into(),
        session_key: format!("agent:main:bench:{id}"),
        origin_channel: Some("local.bench".into()),
        origin_chat: Some(format!("room-{}", id.len() % 7)),
        origin_thread: None,
        label: None,
        task: Some("benchmark task".into()),
        model: Some("instant".into()),
        requester: Some("cli:bench".into()),
        requester_session: None,
        announce: false,
    }
}

/// Record `n` runs in chains of four (a root and three generations).
async fn record_runs(store: &Store, prefix: &str, n: usize) -> anyhow::Result<Vec<String>> {
    let mut ids = Vec::with_capacity(n);
    let mut i = 0;
    while ids.len() < n {
        let root = format!("{prefix}-{i}-0");
        let mut parent = None;
        for depth in 0..4.min(n - ids.len()) {
            let id = format!("{prefix}-{i}-{depth}");
            store
                .runs()
                .insert(&run(id.clone(), parent.clone(), &root, depth as i64))
                .await?;
            parent = Some(id.clone());
            ids.push(id);
        }
        i += 1;
    }
    Ok(ids)
}

fn summary(name: &str, mut micros: Vec<u64>) {
    micros.sort_unstable();
    println!(
        "  {name} (n={}): p50 {:.2} ms   p90 {:.2} ms   p99 {:.2} ms",
        micros.len(),
        percentile(&micros, 0.5),
        percentile(&micros, 0.9),
        percentile(&micros, 0.99)
    );
}

pub(crate) async fn console(live: usize, changes: usize, tree: usize) -> anyhow::Result<ExitCode> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let extra = format!(
        "[web]\nlisten = \"127.0.0.1:{port}\"\nconsole = true\nconsole_users = [\"cli:bench\"]\n[channels.local.bench]\nallowed_users = [\"*\"]\n"
    );
    let (model, dir, path) = instant_setup(0, "local.bench", &extra).await?;
    let gw = switchboard_gateway::embed::start(&path).await?;
    let store = gw.runtime.store().clone();
    let base = format!("http://127.0.0.1:{port}");
    let (session, _) = store.console().create_session("cli:bench", 3_600_000).await?;
    let cookie = format!("sb_console={session}");
    let http = reqwest::Client::new();

    let running = record_runs(&store, "live", live).await?;
    let events = http
        .get(format!("{base}/console/events"))
        .header("Cookie", &cookie)
        .send()
        .await?
        .error_for_status()?;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let reader = tokio::spawn(async move {
        let mut body = events.bytes_stream();
        let mut pending = String::new();
        while let Some(Ok(chunk)) = body.next().await {
            pending.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = pending.find('\n') {
                let line: String = pending.drain(..=end).collect();
                if let Some(id) = line.trim_end().strip_prefix("data: ")
                    && tx.send(id.to_string()).is_err()
                {
                    return;
                }
            }
        }
    });
    let mut latencies = Vec::with_capacity(changes);
    for i in 0..changes {
        let id = &running[i % running.len()];
        let progress = format!(r#"{{"iterations":{i},"tokens_in":{},"tokens_out":5}}"#, i * 10);
        let t = Instant::now();
        store.runs().set_progress(id, &progress).await?;
        loop {
            let seen = tokio::time::timeout(Duration::from_secs(5), rx.recv())
                .await
                .map_err(|_| anyhow::anyhow!("no event for run {id} within 5 s"))?
                .ok_or_else(|| anyhow::anyhow!("the event stream ended"))?;
            if &seen == id {
                break;
            }
        }
        latencies.push(t.elapsed().as_micros() as u64);
    }
    reader.abort();

    record_runs(&store, "tree", tree).await?;
    let mut page = Vec::new();
    let mut fragment = Vec::new();
    let mut size = 0;
    for i in 0..60 {
        let (url, out) = if i % 2 == 0 {
            (format!("{base}/console"), &mut page)
        } else {
            (format!("{base}/console/fragment/runs"), &mut fragment)
        };
        let t = Instant::now();
        let html = http
            .get(url)
            .header("Cookie", &cookie)
            .send()
            .await?
            .error_for_status()?
            .text()
            .await?;
        out.push(t.elapsed().as_micros() as u64);
        size = size.max(html.len());
    }
    println!("operator console, the whole gateway in this process, SQLite control plane");
    summary(
        &format!("run change -> SSE event on the stream, {live} runs live"),
        latencies,
    );
    summary(&format!("run tree page, {} runs", tree + live), page);
    summary(
        &format!("run tree fragment (live refresh), {} runs", tree + live),
        fragment,
    );
    println!("  run tree page size: {:.0} KiB", size as f64 / 1024.0);
    drop(model);
    gw.stop().await;
    std::fs::remove_dir_all(&dir).ok();
    Ok(ExitCode::SUCCESS)
}
