//! `switchboard status`: the gateways sharing this control plane, which
//! one runs each channel, and what waits in the inbox and outbox.

use std::path::Path;
use std::process::ExitCode;
use switchboard_config::Config;
use switchboard_store::Store;

pub(crate) async fn run(config_path: &Path) -> anyhow::Result<ExitCode> {
    let config = Config::load(config_path).map_err(|e| anyhow::anyhow!("{e}"))?;
    crate::cluster::instance::set_lease(config.cluster.lease_secs);
    let store = Store::open_existing(&config.database_url).await?;
    let now = store.now_ms();
    let here = crate::cluster::instance::host();
    let instances = store.instances().await?;
    println!("instances ({}):", instances.len());
    for i in &instances {
        let state = if crate::cluster::instance::is_dead(i, &here, now) {
            "dead"
        } else {
            "live"
        };
        println!(
            "  {} {} pid {} on {}, build {}, up {} s, heartbeat {:.1} s ago, {state}, configuration {}",
            short(&i.id),
            i.role,
            i.pid,
            i.host,
            build(i),
            (now - i.started_at) / 1000,
            (now - i.heartbeat_at) as f64 / 1000.0,
            if i.config_digest.is_empty() {
                "unknown"
            } else {
                &i.config_digest
            }
        );
    }
    let mut builds: Vec<String> = instances.iter().map(build).collect();
    builds.sort();
    builds.dedup();
    if builds.len() > 1 {
        println!(
            "  mixed builds ({}): an upgrade is under way; see docs/operations.md, \"Upgrades\"",
            builds.join(", ")
        );
    }
    let leases = store.leases().all().await?;
    println!("channels ({}):", leases.len());
    let lease_ms = crate::cluster::instance::lease().as_millis() as i64;
    for l in &leases {
        let age = now - l.renewed_at;
        let held = if l.is_held(now, lease_ms) { "held" } else { "free" };
        println!(
            "  {} owned by {} (generation {}), renewed {:.1} s ago, {held}",
            l.channel,
            short(&l.owner),
            l.generation,
            age as f64 / 1000.0
        );
    }
    match store.check_ready().await {
        Ok(()) => println!("database: reachable, every migration applied"),
        Err(why) => println!("database: {why}"),
    }
    let (pending, done) = store.inbox().counts().await?;
    let queued = store.outbox().pending().await?;
    println!("inbox: {pending} pending, {done} answered (kept for redeliveries)");
    println!("outbox: {queued} queued");
    store.close().await;
    println!("{}", local_readiness(&config).await);
    Ok(ExitCode::SUCCESS)
}

/// What this host's gateway answers on `/readyz`: on the metrics
/// listener when there is one, else on its UNIX socket (`[web].socket`).
async fn local_readiness(config: &Config) -> String {
    let builder = switchboard_http::client_builder().timeout(std::time::Duration::from_secs(2));
    let (builder, url, at) = match config.telemetry.metrics_listen.as_deref() {
        Some(addr) => {
            let addr = addr.replace("0.0.0.0", "127.0.0.1");
            (builder, format!("http://{addr}/readyz"), addr)
        }
        None => (
            builder.unix_socket(std::path::Path::new(&config.web.socket)),
            "http://localhost/readyz".to_string(),
            config.web.socket.clone(),
        ),
    };
    let answer = match builder.build() {
        Ok(c) => c.get(&url).send().await,
        Err(e) => return format!("readiness: cannot ask ({e})"),
    };
    match answer {
        Ok(r) => {
            let code = r.status().as_u16();
            let body = r.text().await.unwrap_or_default();
            let word = if code == 200 { "ready" } else { "NOT ready" };
            format!("readiness of the gateway at {at}: {word} {}", body.trim())
        }
        Err(_) => format!("readiness: no gateway answers at {at} on this host"),
    }
}

fn short(id: &str) -> &str {
    &id[..8.min(id.len())]
}

/// An instance's build and schema (`0.1.0 (schema 13)`).
fn build(i: &switchboard_store::InstanceRow) -> String {
    match (i.version.as_str(), i.schema_version) {
        ("", _) => "unknown (older than schema 13)".to_string(),
        (v, n) => format!("{v} (schema {n})"),
    }
}
