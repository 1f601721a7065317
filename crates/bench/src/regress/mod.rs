//! `switchboard bench compare`: the regression bench. Two builds of the
//! gateway (`--old`, `--new`) and the raw relay (the floor) run one after
//! another, `--runs` times, each as its own process against the same
//! loopback Bot API and instant model; the table gives each measure's
//! median and spread, and the ratios new/old, new/floor and old/floor.
//! `scripts/bench-regress.sh REV` builds both and calls it
//! (docs/performance.md).

mod agent_request;
pub(crate) mod relay;
mod slow_model;
mod trial;

use std::path::PathBuf;
use std::process::ExitCode;
use trial::{MEASURES, Measures, Target};
pub(crate) use trial::{Running, Sizes, rss_mib};

/// What to compare and how much.
pub(crate) struct Compare {
    pub old: Option<PathBuf>,
    pub new: Option<PathBuf>,
    pub runs: usize,
    pub sizes: Sizes,
    /// TOML added to the old and the new configuration.
    pub extra: (String, String),
    /// What the floor does.
    pub floor: Floor,
}

/// What the relay that sets the floor does beyond long-poll, ask, answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Floor {
    /// Nothing: it stores nothing and asks a bare question.
    Raw,
    /// It keeps the durable-delivery rows (`bench relay --store`).
    Stored,
    /// It keeps them and sends the model the agent's request (`bench relay
    /// --store --config`).
    Agent,
}

impl Floor {
    /// How the table's heading names it.
    fn describe(self) -> &'static str {
        match self {
            Floor::Raw => "the raw relay",
            Floor::Stored => "the relay with durable delivery (SQLite)",
            Floor::Agent => {
                "the relay with durable delivery (SQLite) sending the agent's request (its tools, streamed)"
            }
        }
    }
}

/// Run the comparison and print its table.
pub(crate) async fn compare(c: Compare) -> anyhow::Result<ExitCode> {
    let me = std::env::current_exe()?;
    // A trace sink for configurations that export traces (`{otlp}`).
    let sink = if c.extra.0.contains("{otlp}") || c.extra.1.contains("{otlp}") {
        trace_sink().await?
    } else {
        String::new()
    };
    let gateway = |label: &str, program: PathBuf, extra: &str| Target {
        label: label.to_string(),
        program,
        args: ["run", "--config", "{config}"].map(String::from).to_vec(),
        extra: extra.replace("{otlp}", &sink),
    };
    let mut relay: Vec<String> = ["bench", "relay", "--api", "{api}", "--model", "{model}"]
        .map(String::from)
        .to_vec();
    if c.floor != Floor::Raw {
        relay.extend(["--store", "{dir}"].map(String::from));
    }
    if c.floor == Floor::Agent {
        relay.extend(["--config", "{config}"].map(String::from));
    }
    let mut targets = vec![Target {
        label: "floor".into(),
        program: me.clone(),
        args: relay,
        extra: String::new(),
    }];
    if let Some(old) = c.old {
        targets.push(gateway("old", old, &c.extra.0));
    }
    targets.push(gateway("new", c.new.unwrap_or(me), &c.extra.1));
    // Each binary runs from a copy of its own, read from disk the same way
    // (the bench's own file is mapped by this process: its cached pages
    // could not be dropped).
    let copies = Copies(std::env::temp_dir().join(format!("switchboard-compare-{}", uuid::Uuid::new_v4())));
    std::fs::create_dir_all(&copies.0)?;
    for t in &mut targets {
        let copy = copies.0.join(&t.label);
        std::fs::copy(&t.program, &copy)?;
        same_page_cache(&copy);
        t.program = copy;
    }
    let s = c.sizes;
    println!(
        "regression bench: {} run(s); {} sequential DMs, bursts of {} and {} people, {} s idle; loopback Bot API, instant model; floor: {}",
        c.runs,
        s.sequential,
        s.burst,
        s.big_burst,
        s.idle_secs,
        c.floor.describe()
    );
    println!("{}", crate::common::CHANGED_DEFAULTS);
    let mut results: Vec<Vec<Measures>> = vec![Vec::new(); targets.len()];
    for run in 0..c.runs {
        // Alternate the order so drift of the machine spreads over all.
        let order: Vec<usize> = if run % 2 == 0 {
            (0..targets.len()).collect()
        } else {
            (0..targets.len()).rev().collect()
        };
        for i in order {
            let m = trial::run(&targets[i], s).await?;
            eprintln!("  run {} {}: {}", run + 1, targets[i].label, one_line(&m));
            results[i].push(m);
        }
    }
    print_table(&targets, &results);
    Ok(ExitCode::SUCCESS)
}

/// The folder of the binaries' copies, removed however the bench ends.
struct Copies(PathBuf);

impl Drop for Copies {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.0).ok();
    }
}

/// Put `program`'s file in the page cache the way a binary read from disk
/// is: written out, dropped from the cache, then read once. Pages a
/// process has mapped are not dropped: call it on a file nothing runs. A
/// freshly linked binary is cached as it was written, and the kernel maps
/// more of it around each page a process uses (its idle RSS read 1-3 MiB
/// higher than the same file an hour later), which made the newer of two
/// builds look bigger. Best effort: a file that cannot be opened is left
/// as is.
fn same_page_cache(program: &std::path::Path) {
    use std::os::fd::AsRawFd;
    let Ok(file) = std::fs::File::open(program) else {
        return;
    };
    let _ = file.sync_all();
    // SAFETY: a valid open descriptor; advice only, no memory is touched.
    unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    let _ = std::io::copy(&mut &file, &mut std::io::sink());
}

/// An OTLP/HTTP endpoint that takes every export and keeps nothing.
async fn trace_sink() -> anyhow::Result<String> {
    let app = axum::Router::new().route("/v1/traces", axum::routing::post(|| async { "" }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok(url)
}

fn one_line(m: &Measures) -> String {
    m.iter().map(|v| format!("{v:.2}")).collect::<Vec<_>>().join(" ")
}

/// Median (of the middle two for an even count), minimum and maximum of
/// measure `k` over the runs.
fn stats(runs: &[Measures], k: usize) -> (f64, f64, f64) {
    let mut v: Vec<f64> = runs.iter().map(|m| m[k]).collect();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    (median, v[0], v[n - 1])
}

fn print_table(targets: &[Target], results: &[Vec<Measures>]) {
    let col = |t: &str| results.iter().zip(targets).position(|(_, x)| x.label == t);
    let (floor, old, new) = (col("floor"), col("old"), col("new"));
    let mut header = format!("| {:<28} | {:<11} |", "measure", "unit");
    for t in targets {
        header.push_str(&format!(" {:<22} |", format!("{} median (min–max)", t.label)));
    }
    let ratios: Vec<(&str, Option<usize>, Option<usize>)> = vec![
        ("new/old", new, old),
        ("new/floor", new, floor),
        ("old/floor", old, floor),
    ]
    .into_iter()
    .filter(|(_, a, b)| a.is_some() && b.is_some())
    .collect();
    for (name, _, _) in &ratios {
        header.push_str(&format!(" {name:<9} |"));
    }
    println!("{header}");
    println!(
        "{}",
        header
            .chars()
            .map(|ch| if ch == '|' { '|' } else { '-' })
            .collect::<String>()
    );
    for (k, (measure, unit)) in MEASURES.iter().enumerate() {
        let mut row = format!("| {measure:<28} | {unit:<11} |");
        for r in results {
            let (median, lo, hi) = stats(r, k);
            row.push_str(&format!(" {:<22} |", format!("{median:.2} ({lo:.2}–{hi:.2})")));
        }
        for (_, a, b) in &ratios {
            let (x, y) = (
                stats(&results[a.unwrap_or(0)], k).0,
                stats(&results[b.unwrap_or(0)], k).0,
            );
            let ratio = if y > 0.0 { format!("{:.2}", x / y) } else { "—".into() };
            row.push_str(&format!(" {ratio:<9} |"));
        }
        println!("{row}");
    }
}
