//! `switchboard run`: the long-running gateway. Channels register here as
//! their adapters land; SIGHUP re-reads and validates the configuration.

use crate::bootstrap;
use std::path::Path;
use std::process::ExitCode;
use switchboard_config::Config;
use tokio::signal::unix::{SignalKind, signal};

pub async fn run(config_path: &Path) -> anyhow::Result<ExitCode> {
    let started = bootstrap::start(config_path).await?;
    let config = started.runtime.config().clone();
    for (name, enabled) in config.channels.instances() {
        if enabled {
            tracing::warn!(channel = %name, "configured, but this build has no adapter for it yet; it is not started");
        }
    }
    tracing::info!(
        agents = ?config.enabled_agents(),
        database = %config.database_url.split('?').next().unwrap_or(""),
        "switchboard is running; Ctrl-C stops it"
    );
    let scheduler = started.runtime.spawn_scheduler();
    let mut hup = signal(SignalKind::hangup())?;
    let mut term = signal(SignalKind::terminate())?;
    loop {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => break,
            _ = term.recv() => break,
            _ = hup.recv() => match Config::load(config_path) {
                Ok(_) => tracing::warn!("configuration re-read and valid; applying it needs a restart in this version"),
                Err(e) => tracing::error!("configuration reload refused:\n{e}"),
            },
        }
    }
    tracing::info!("stopping");
    scheduler.abort();
    started.runtime.store().close().await;
    Ok(ExitCode::SUCCESS)
}
