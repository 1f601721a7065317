//! A scripted model server as its own process, for benchmarks that should
//! not share a process with the gateway: answers `--replies N` requests
//! with `--text` after `--delay-ms`, then keeps serving 500s.
//!
//! `scripted-model --replies 1000 --delay-ms 200 --text done` prints its
//! base URL on the first line of stdout.

use switchboard_test_support::{ScriptedModel, Step};

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |name: &str, default: &str| -> String {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
            .unwrap_or_else(|| default.to_string())
    };
    let replies: usize = value("--replies", "1000").parse().expect("--replies N");
    let delay: u64 = value("--delay-ms", "0").parse().expect("--delay-ms N");
    let text = value("--text", "done");
    let model = ScriptedModel::start().await;
    model.without_recording();
    for _ in 0..replies {
        model.push(Step::text(text.clone()).delay(std::time::Duration::from_millis(delay)));
    }
    println!("{}", model.url());
    tokio::signal::ctrl_c().await.ok();
}
