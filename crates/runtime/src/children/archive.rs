//! Archiving finished children's transcripts: after
//! `archive_after_minutes` the file is renamed `*.deleted.<timestamp>` in
//! the same folder. Due work is computed from stored timestamps, so a
//! restart loses none of it.

use crate::core::Core;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use switchboard_store::RunKind;
use switchboard_store::now_ms;

pub(crate) async fn archive_one(core: &Core, run_id: &str, path: &Path) {
    if path.exists() {
        let archived = path.with_extension(format!("jsonl.deleted.{}", now_ms() / 1000));
        if let Err(e) = tokio::fs::rename(path, &archived).await {
            tracing::warn!(run_id, error = %e, "cannot archive a transcript");
            return;
        }
    }
    if let Err(e) = core.store.runs().mark_archived(run_id).await {
        tracing::warn!(run_id, error = %e, "cannot record an archived transcript");
    }
}

/// Archive due transcripts now; returns how many were archived.
pub(crate) async fn archive_due(core: &Core) -> usize {
    let Ok(rows) = core.store.runs().to_archive(RunKind::SessionsSpawn, 500).await else {
        return 0;
    };
    let mut done = 0;
    let config = core.config();
    for (id, agent, owners, ended_at) in rows {
        let minutes = owners
            .first()
            .and_then(|r| config.agents.get(r))
            .map(|a| a.subagents.archive_after_minutes)
            .unwrap_or(60);
        if ended_at + (minutes as i64) * 60_000 > core.store.now_ms() {
            continue;
        }
        archive_one(
            core,
            &id,
            &core.records_dir(&agent).join("sessions").join(format!("{id}.jsonl")),
        )
        .await;
        done += 1;
    }
    done
}

/// Archive due transcripts every 30 seconds until aborted.
pub(crate) fn spawn_archiver(core: Arc<Core>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            archive_due(&core).await;
            tokio::time::sleep(Duration::from_secs(30)).await;
        }
    })
}
