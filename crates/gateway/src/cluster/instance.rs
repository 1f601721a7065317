//! This process as one instance of the control plane (see the store's
//! `instances`): it registers at start, says it is alive every few seconds,
//! and reclaims what dead instances left — runs become `lost` (background
//! work and session children are announced as such) and pending approvals
//! `expired`. An instance is dead when its heartbeat is older than
//! `[cluster] lease_secs`, or at once when it ran on this host and its process is gone, so
//! a restart after a crash does not wait for the lease. A second process on
//! the same database (`switchboard chat` beside `run`) leaves the first
//! one's work alone.

use std::time::Duration;
use switchboard_store::{ApprovalRow, InstanceRow, Store};

/// `[cluster] lease_secs`, set once at start (15 s until then).
static LEASE_SECS: std::sync::OnceLock<u64> = std::sync::OnceLock::new();

/// Take `[cluster] lease_secs` for this process.
pub(crate) fn set_lease(secs: u64) {
    let _ = LEASE_SECS.set(secs.max(3));
}

/// A heartbeat (or channel lease) older than this means the instance is gone.
pub(crate) fn lease() -> Duration {
    Duration::from_secs(*LEASE_SECS.get().unwrap_or(&15))
}

/// How often an instance says it is alive and renews its leases.
pub(crate) fn heartbeat() -> Duration {
    lease() / 3
}

/// This machine's name, to tell whose process ids can be checked here.
pub(crate) fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// Whether a process with this id exists on this host.
fn process_exists(pid: i64) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks that the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Whether `row` is an instance that is gone (as a command that does not
/// itself heartbeat sees it).
pub(crate) fn is_dead(row: &InstanceRow, this_host: &str, now: i64) -> bool {
    is_dead_since(row, this_host, now, i64::MIN)
}

/// Whether `row` is gone, judged by an instance that has reached the
/// database without a break since `reachable_since`: silence counts only
/// from then on, so an outage of the database, which silences every
/// instance at once, never makes a live one look dead when it comes back.
pub(crate) fn is_dead_since(row: &InstanceRow, this_host: &str, now: i64, reachable_since: i64) -> bool {
    if now - row.heartbeat_at.max(reachable_since) > lease().as_millis() as i64 {
        return true;
    }
    row.host == this_host && !process_exists(row.pid)
}

/// How long a live instance has to queue the announcement of a run it
/// ended (a child session's announce step, a model call, comes after the
/// end) before another sweep queues it in its place (docs/delegation.md).
const ANNOUNCE_GRACE: Duration = Duration::from_secs(600);

/// Reclaim what dead instances (never this one) left, and announce every
/// finished run whose announcement was never queued: a gone instance's
/// (the runs just lost among them), and any ended `ANNOUNCE_GRACE` ago.
/// Returns the approvals that expired.
pub(crate) async fn sweep(store: &Store) -> Result<Vec<ApprovalRow>, switchboard_store::StoreError> {
    let this_host = host();
    let now = store.now_ms();
    let since = store.reachable_since();
    let (dead, alive): (Vec<InstanceRow>, Vec<InstanceRow>) = store
        .instances()
        .await?
        .into_iter()
        .filter(|i| Some(i.id.as_str()) != store.instance_id())
        .partition(|i| is_dead_since(i, &this_host, now, since));
    // Another live process shares the database: its writes must wake ours.
    store.note_peers(!alive.is_empty());
    let dead: Vec<String> = dead.into_iter().map(|i| i.id).collect();
    let reclaimed = store.reclaim(&dead).await?;
    if !reclaimed.lost_runs.is_empty() {
        tracing::warn!(
            count = reclaimed.lost_runs.len(),
            "runs of a stopped gateway process are now lost"
        );
    }
    if !reclaimed.expired_approvals.is_empty() {
        tracing::warn!(
            count = reclaimed.expired_approvals.len(),
            "approval requests of a stopped gateway process are now expired"
        );
    }
    for r in &reclaimed.replies_in_doubt {
        tracing::warn!(
            channel = %r.channel, chat = %r.chat, reply_to = r.reply_to.as_deref().unwrap_or(""),
            "a reply was being delivered when its gateway process stopped; the outbox sends it (it may arrive twice)"
        );
    }
    // Runs just lost are among these when they are announced kinds.
    let ended_before = now - ANNOUNCE_GRACE.as_millis() as i64;
    for r in store.runs().unannounced(ended_before).await? {
        tracing::info!(run_id = %r.id, status = %r.status, "announcing a run whose announcement was never queued");
        switchboard_runtime::children::announce_row(store, &r).await?;
    }
    Ok(reclaimed.expired_approvals)
}

/// Say this instance is alive every `heartbeat()`, and sweep up after dead
/// ones; `expired` is told about approvals that expired that way (to edit
/// their prompts). An instance the others took for dead (it stalled past
/// its lease) first stops everything it was doing (`taken_for_dead`: its
/// turns and runs were adopted or lost, and acting on would run tools
/// twice), then registers again as `role` (`run` or `chat`) under a new id.
pub(crate) fn spawn_heartbeat(
    store: Store,
    role: &'static str,
    expired: impl Fn(Vec<ApprovalRow>) -> futures::future::BoxFuture<'static, ()> + Send + 'static,
    taken_for_dead: impl Fn() + Send + 'static,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(heartbeat()).await;
            if let Err(e) = store.sync_clock().await {
                tracing::warn!(error = %e, "cannot read the database's clock");
            }
            match store.heartbeat(heartbeat()).await {
                Ok(true) => {}
                Ok(false) => {
                    tracing::error!(
                        old_id = store.instance_id().unwrap_or(""),
                        "the other gateways took this instance for dead (it was paused or cut off too long) and reclaimed its work; stopping what it was doing and registering under a new id"
                    );
                    taken_for_dead();
                    match store.register_anew(&host(), std::process::id(), role).await {
                        Ok(id) => tracing::warn!(new_id = %id, "registered again"),
                        Err(e) => tracing::error!(error = %e, "cannot register this instance again"),
                    }
                }
                Err(e) => {
                    tracing::error!(error = %e, "cannot record this instance's heartbeat");
                    continue;
                }
            }
            match sweep(&store).await {
                Ok(rows) if !rows.is_empty() => expired(rows).await,
                Ok(_) => {}
                Err(e) => tracing::error!(error = %e, "cannot reclaim the work of stopped instances"),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_store::now_ms;

    fn row(host: &str, pid: i64, age_ms: i64) -> InstanceRow {
        InstanceRow {
            id: "i".into(),
            host: host.into(),
            pid,
            started_at: 0,
            heartbeat_at: now_ms() - age_ms,
            role: "run".into(),
            config_digest: String::new(),
            version: String::new(),
            schema_version: 0,
        }
    }

    #[test]
    fn dead_instances() {
        let here = host();
        let me = i64::from(std::process::id());
        assert!(
            !is_dead(&row(&here, me, 1000), &here, now_ms()),
            "this process is alive"
        );
        assert!(
            is_dead(&row(&here, me, 60_000), &here, now_ms()),
            "a stale heartbeat is dead"
        );
        assert!(
            is_dead(&row(&here, i64::from(i32::MAX), 1000), &here, now_ms()),
            "no such process here"
        );
        assert!(
            !is_dead(&row("elsewhere", i64::from(i32::MAX), 1000), &here, now_ms()),
            "another host's process is judged by its heartbeat"
        );
        // The database was away for a minute and came back 2 s ago: a peer
        // silent for 60 s is not dead until it stays silent for a lease of
        // time the database answered.
        let lease_ms = lease().as_millis() as i64;
        let back = now_ms() - 2_000;
        assert!(!is_dead_since(&row("elsewhere", 1, 60_000), &here, now_ms(), back));
        let back_long_ago = now_ms() - lease_ms - 2_000;
        assert!(is_dead_since(
            &row("elsewhere", 1, 60_000),
            &here,
            now_ms(),
            back_long_ago
        ));
    }
}

#[cfg(test)]
mod sweep_tests {
    use super::*;
    use switchboard_store::{NewRun, RunEnd, RunKind, RunStatus};

    fn run(id: &str, announce: bool) -> NewRun {
        NewRun {
            id: id.into(),
            kind: RunKind::SessionsSpawn,
            root_id: id.into(),
            agent: "main".into(),
            session_key: format!("agent:main:subagent:{id}"),
            origin_channel: Some("local.team".into()),
            origin_chat: Some("room".into()),
            announce,
            ..NewRun::default()
        }
    }

    /// A child that ended just before a crash, its announcement not yet
    /// queued, is announced by the next start's sweep, once; a live
    /// instance's child that just ended is left to it (its announce step
    /// may still answer `ANNOUNCE_SKIP`) until `ANNOUNCE_GRACE` has passed.
    #[tokio::test]
    async fn an_ended_run_never_announced_is_announced_once() {
        let peers = crate::test_peers::team_channel().await;
        let url = format!("sqlite://{}/cp.db", peers._dir.path().display());
        let live = &peers.store;
        live.register_instance(&host(), std::process::id(), "run")
            .await
            .unwrap();
        // A process on this host that has crashed: its pid is gone.
        let crashed = switchboard_store::Store::open(&url).await.unwrap();
        crashed
            .register_instance(&host(), i32::MAX as u32, "run")
            .await
            .unwrap();
        let end = RunEnd {
            output: Some("done"),
            ..RunEnd::default()
        };
        for (store, id, announce) in [
            (&crashed, "child-1", true),
            (&crashed, "quiet-1", false),
            (live, "asking-1", true),
        ] {
            store.runs().insert(&run(id, announce)).await.unwrap();
            store.runs().finish(id, RunStatus::Completed, &end).await.unwrap();
        }
        sweep(live).await.unwrap();
        sweep(live).await.unwrap();
        let queued = live.outbox().due(10).await.unwrap();
        let ids: Vec<&str> = queued.iter().map(|r| r.delivery_key.as_str()).collect();
        assert_eq!(
            ids,
            ["child-1"],
            "announced once; a run that is not announced stays so, and a live one's is its own"
        );
        assert!(
            queued[0].body.starts_with("Status: success\nResult: done"),
            "{}",
            queued[0].body
        );
        // Past the grace, a live instance's run is announced by the sweep too.
        let later = live.now_ms() + ANNOUNCE_GRACE.as_millis() as i64 + 1;
        let late: Vec<String> = live
            .runs()
            .unannounced(later)
            .await
            .unwrap()
            .into_iter()
            .map(|r| r.id)
            .collect();
        assert_eq!(late, ["asking-1"]);
        // Its announce step answered ANNOUNCE_SKIP: nobody announces it.
        live.runs().announcement_not_needed("asking-1").await.unwrap();
        assert!(live.runs().unannounced(later).await.unwrap().is_empty());
    }

    /// Only a gone instance's work is reclaimed: a live one's keeps running.
    #[tokio::test]
    async fn a_live_instances_runs_are_left_alone() {
        let peers = crate::test_peers::team_channel().await;
        let url = format!("sqlite://{}/cp.db", peers._dir.path().display());
        let live = peers.store.clone();
        live.register_instance(&host(), std::process::id(), "run")
            .await
            .unwrap();
        live.runs().insert(&run("live-1", true)).await.unwrap();
        // A process on this host that has crashed: its pid is gone.
        let crashed = switchboard_store::Store::open(&url).await.unwrap();
        crashed
            .register_instance(&host(), i32::MAX as u32, "run")
            .await
            .unwrap();
        crashed.runs().insert(&run("crashed-1", true)).await.unwrap();
        // A second process starts on the same database file.
        let second = switchboard_store::Store::open(&url).await.unwrap();
        second
            .register_instance(&host(), std::process::id(), "chat")
            .await
            .unwrap();
        sweep(&second).await.unwrap();
        assert_eq!(
            second.runs().get("live-1").await.unwrap().unwrap().status.as_str(),
            "running"
        );
        assert_eq!(
            second.runs().get("crashed-1").await.unwrap().unwrap().status.as_str(),
            "lost"
        );
        let queued = second.outbox().due(10).await.unwrap();
        let ids: Vec<&str> = queued.iter().map(|r| r.delivery_key.as_str()).collect();
        assert_eq!(ids, ["crashed-1"]);
        assert!(queued[0].body.contains("run lost"), "{}", queued[0].body);
    }
}
