//! `switchboard backup PATH` and `switchboard restore PATH`: a checked
//! copy of the embedded database, taken while the gateway runs, and its
//! return in place of a stopped gateway's database (docs/operations.md).

use std::path::Path;
use std::process::ExitCode;
use switchboard_config::Config;
use switchboard_store::{BackupSummary, Store};

fn load(config_path: &Path) -> anyhow::Result<Config> {
    Config::load(config_path).map_err(|e| anyhow::anyhow!("{e}"))
}

fn describe(s: &BackupSummary) -> String {
    format!(
        "{} bytes; SQLite's integrity check passed; {} inbox rows, {} transcript messages, {} runs",
        s.bytes, s.inbox, s.messages, s.runs
    )
}

pub(crate) async fn backup(config_path: &Path, dest: &Path) -> anyhow::Result<ExitCode> {
    let config = load(config_path)?;
    let store = Store::open(&config.database_url).await?;
    let made = store.backup_to(dest).await;
    store.close().await;
    let summary = made.map_err(|e| anyhow::anyhow!("backup not made: {e}"))?;
    println!("backup written to {}: {}", dest.display(), describe(&summary));
    Ok(ExitCode::SUCCESS)
}

pub(crate) async fn restore(config_path: &Path, from: &Path) -> anyhow::Result<ExitCode> {
    let config = load(config_path)?;
    let Some(db) = switchboard_store::sqlite_file(&config.database_url)? else {
        anyhow::bail!(
            "restore puts back the embedded SQLite database; a PostgreSQL control plane is restored with pg_restore or psql (docs/operations.md)"
        );
    };
    let summary = switchboard_store::verify_backup(from)
        .await
        .map_err(|e| anyhow::anyhow!("{} is not a usable backup: {e}", from.display()))?;
    if db.exists() {
        refuse_if_running(&config).await?;
    }
    let staged = db.with_extension("restoring");
    std::fs::copy(from, &staged)
        .map_err(|e| anyhow::anyhow!("cannot copy {} to {}: {e}", from.display(), staged.display()))?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&staged, std::fs::Permissions::from_mode(0o600))?;
        std::fs::File::open(&staged)?.sync_all()?;
    }
    if db.exists() {
        let stamp = switchboard_store::now_ms() / 1000;
        let name = db
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let kept = db.with_file_name(format!("{name}.before-restore-{stamp}"));
        // The old database stays beside the new one, with its WAL.
        for suffix in ["", "-wal", "-shm"] {
            let old = std::path::PathBuf::from(format!("{}{suffix}", db.display()));
            if old.exists() {
                std::fs::rename(&old, format!("{}{suffix}", kept.display()))?;
            }
        }
        println!("the previous database is kept as {}", kept.display());
    }
    std::fs::rename(&staged, &db)?;
    println!(
        "restored {} from {}: {}",
        db.display(),
        from.display(),
        describe(&summary)
    );
    Ok(ExitCode::SUCCESS)
}

/// A gateway still writing to the database would lose its writes (and
/// mix them with the restored file): refuse while one is alive.
async fn refuse_if_running(config: &Config) -> anyhow::Result<()> {
    crate::cluster::instance::set_lease(config.cluster.lease_secs);
    let store = Store::open(&config.database_url).await?;
    let (now, here) = (store.now_ms(), crate::cluster::instance::host());
    let instances = store.instances().await;
    store.close().await;
    if let Some(i) = instances?
        .iter()
        .find(|i| !crate::cluster::instance::is_dead(i, &here, now))
    {
        anyhow::bail!(
            "a gateway is running on this database ({} pid {} on {}); stop it, then restore",
            i.role,
            i.pid,
            i.host
        );
    }
    Ok(())
}
