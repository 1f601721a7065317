//! Start-up shared by `run` and `chat`: load the configuration, open the
//! store, settle what an earlier process left behind, build the runtime.

use anyhow::Context;
use std::path::Path;
use std::sync::Arc;
use switchboard_config::Config;
use switchboard_runtime::Runtime;
use switchboard_store::Store;

pub struct Started {
    pub runtime: Arc<Runtime>,
    /// Requests an earlier process left pending, now expired; their
    /// prompts are edited once channels run.
    pub expired_approvals: Vec<switchboard_store::ApprovalRow>,
}

pub async fn start(config_path: &Path) -> anyhow::Result<Started> {
    let config = Config::load(config_path).map_err(|e| anyhow::anyhow!("{e}"))?;
    for w in config.warnings() {
        tracing::warn!("{w}");
    }
    let store = Store::open(&config.database_url)
        .await
        .with_context(|| "opening the control-plane database (database_url)")?;
    let lost = store.mark_running_runs_lost().await?;
    if !lost.is_empty() {
        tracing::warn!(
            count = lost.len(),
            "runs left running by an earlier process are now lost"
        );
    }
    // Background work nobody is waiting for is announced as lost in the chat
    // that asked for it (foreground children died with their turn).
    for id in &lost {
        let background = store
            .run(id)
            .await?
            .is_some_and(|r| r.label.as_deref() == Some("background"));
        if background {
            switchboard_runtime::announce::announce_run(&store, id).await?;
        }
    }
    let expired = store.expire_pending_approvals().await?;
    if !expired.is_empty() {
        tracing::warn!(
            count = expired.len(),
            "approval requests pending at restart are now expired"
        );
    }
    let runtime = Runtime::new(Arc::new(config), store).with_context(|| "creating agent workspaces (workspace_dir)")?;
    Ok(Started {
        runtime: Arc::new(runtime),
        expired_approvals: expired,
    })
}
