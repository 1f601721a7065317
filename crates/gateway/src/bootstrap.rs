//! Start-up shared by `run` and `chat`: load the configuration, open the
//! store, register this process and settle what stopped processes left
//! behind (see `instance`), build the runtime.

use anyhow::Context;
use std::path::Path;
use std::sync::Arc;
use switchboard_config::Config;
use switchboard_runtime::Runtime;
use switchboard_store::Store;

pub(crate) struct Started {
    pub runtime: Arc<Runtime>,
    /// Requests an earlier process left pending, now expired; their
    /// prompts are edited once channels run.
    pub expired_approvals: Vec<switchboard_store::ApprovalRow>,
}

/// `role` is `run` or `chat` (a second `run` on one SQLite file is refused).
pub(crate) async fn start(config_path: &Path, role: &str) -> anyhow::Result<Started> {
    let config = Config::load(config_path).map_err(|e| anyhow::anyhow!("{e}"))?;
    crate::cluster::instance::set_lease(config.cluster.lease_secs);
    // Probing the kernel takes a few milliseconds: off the start path.
    let sandbox = config.sandbox.clone();
    std::thread::spawn(move || crate::sandbox_report::log_at_start(&sandbox));
    // So are the system's certificates, which every HTTP client needs.
    switchboard_http::warm_up();
    for w in config.warnings() {
        tracing::warn!("{w}");
    }
    if let Some(why) = crate::database_reach::refusal(&config).await {
        anyhow::bail!("{why}");
    }
    let store = Store::open(&config.database_url)
        .await
        .with_context(|| "opening the control-plane database (database_url)")?;
    // This process is an instance of the control plane; what instances
    // that are gone left running is reclaimed (never a live one's).
    store
        .register_instance(&crate::cluster::instance::host(), std::process::id(), role)
        .await
        .with_context(|| "registering this process in the control plane")?;
    if let Ok(bytes) = std::fs::read(config_path)
        && let Err(e) = store.set_config_digest(&crate::config_digest::digest(&bytes)).await
    {
        tracing::warn!(error = %e, "cannot record the configuration's digest");
    }
    if role == "run"
        && let Err(e) = crate::cluster::refuse_second_run_on_sqlite(&store, &config.database_url).await
    {
        let _ = store.unregister_instance().await;
        return Err(e);
    }
    let expired = crate::cluster::instance::sweep(&store).await?;
    let runtime = Runtime::new(Arc::new(config), store).with_context(|| "creating agent workspaces (workspace_dir)")?;
    Ok(Started {
        runtime: Arc::new(runtime),
        expired_approvals: expired,
    })
}
