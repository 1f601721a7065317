//! `switchboard backup PATH` and `switchboard restore PATH`: a checked
//! copy of the embedded database, taken while the gateway runs, and its
//! return in place of a stopped gateway's database (docs/operations.md).
//! Neither creates nor migrates the database it is pointed at.

use std::path::{Path, PathBuf};
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
    let store = Store::open_existing(&config.database_url).await?;
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
    switchboard_store::verify_backup(from)
        .await
        .map_err(|e| anyhow::anyhow!("{} is not a usable backup: {e}", from.display()))?;
    if db.exists() {
        refuse_if_running(&config).await?;
    }
    let staged = stage(from, &db).await?;
    let summary = match switchboard_store::verify_backup(&staged).await {
        Ok(s) => s,
        Err(e) => {
            let _ = std::fs::remove_file(&staged);
            anyhow::bail!("the copy of {} did not check out: {e}", from.display());
        }
    };
    if db.exists() {
        let kept = set_aside(&db)?;
        println!("the previous database is kept as {}", kept.display());
    } else {
        // A write-ahead log left without its database would be applied to
        // the restored copy.
        for suffix in ["-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
        }
    }
    std::fs::rename(&staged, &db)?;
    if let Some(folder) = db.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::File::open(folder)?.sync_all()?;
    }
    let db = std::path::absolute(&db).unwrap_or(db);
    println!(
        "restored {} from {}: {}",
        db.display(),
        from.display(),
        describe(&summary)
    );
    Ok(ExitCode::SUCCESS)
}

/// Copy `from` beside `db`, private and synced; the copy that goes in
/// place is the one checked after this.
async fn stage(from: &Path, db: &Path) -> anyhow::Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    // A fresh folder (a new host) has no data folder yet: made private,
    // as `switchboard run` makes it.
    if let Some(parent) = db.parent().filter(|p| !p.as_os_str().is_empty() && !p.exists()) {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)
            .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", parent.display()))?;
    }
    let staged = db.with_extension("restoring");
    let _ = std::fs::remove_file(&staged);
    std::fs::copy(from, &staged)
        .map_err(|e| anyhow::anyhow!("cannot copy {} to {}: {e}", from.display(), staged.display()))?;
    std::fs::set_permissions(&staged, std::fs::Permissions::from_mode(0o600))?;
    std::fs::File::open(&staged)?.sync_all()?;
    Ok(staged)
}

/// Move the database aside under a name of its own; its WAL was folded
/// into it (see `refuse_if_running`), so one file holds it all.
fn set_aside(db: &Path) -> anyhow::Result<PathBuf> {
    let stamp = switchboard_store::now_ms() / 1000;
    let name = db
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    for n in 0..1000 {
        let kept = db.with_file_name(format!("{name}.before-restore-{stamp}-{n}"));
        if kept.symlink_metadata().is_ok() {
            continue;
        }
        std::fs::rename(db, &kept)?;
        for suffix in ["-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
        }
        return Ok(kept);
    }
    anyhow::bail!("cannot find a free name beside {} for the old database", db.display())
}

/// A gateway still writing to the database would lose its writes (and
/// mix them with the restored file): refuse while one is alive. The WAL
/// is folded into the database file on the way out.
async fn refuse_if_running(config: &Config) -> anyhow::Result<()> {
    crate::cluster::instance::set_lease(config.cluster.lease_secs);
    let store = Store::open_existing(&config.database_url).await?;
    let (now, here) = (store.now_ms(), crate::cluster::instance::host());
    let instances = store.instances().await;
    let live = instances.as_ref().ok().and_then(|all| {
        all.iter()
            .find(|i| !crate::cluster::instance::is_dead(i, &here, now))
            .cloned()
    });
    let folded = if live.is_none() {
        store.checkpoint().await
    } else {
        Ok(())
    };
    store.close().await;
    instances?;
    if let Some(i) = live {
        anyhow::bail!(
            "a gateway is running on this database ({} pid {} on {}); stop it, then restore",
            i.role,
            i.pid,
            i.host
        );
    }
    folded.map_err(|e| anyhow::anyhow!("cannot fold the database's WAL into it before moving it aside: {e}"))
}
