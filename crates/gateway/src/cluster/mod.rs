//! Several gateways on one control plane: each chat platform account runs
//! on one instance at a time, under a lease renewed with the heartbeat
//! (see the store's `leases`). An instance that cannot take a channel's
//! lease leaves the channel alone and tries again each heartbeat; one that
//! loses it (it was paused, or the database was out of reach for longer
//! than the lease) stops the channel. Cursor writes carry the generation
//! of the lease they were read under, so a stale owner cannot move them.
//! Local channels (and the terminal) belong to their process: no lease.

pub(crate) mod fence;
pub(crate) mod instance;

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;
use switchboard_core::{Channel, Intake};
use switchboard_store::Store;

/// The lease generation held for each channel this instance runs.
#[derive(Clone, Default)]
pub struct Fences(Arc<Mutex<HashMap<String, i64>>>);

impl Fences {
    /// The generation `channel` is held at here, if it is.
    pub(crate) fn of(&self, channel: &str) -> Option<i64> {
        self.0.lock().get(channel).copied()
    }

    /// Forget `channel` (stopped here); the generation it was held at.
    pub(crate) fn forget(&self, channel: &str) -> Option<i64> {
        self.0.lock().remove(channel)
    }

    /// Whether this instance runs `channel` (a leased one it holds, or one
    /// of its own).
    pub(crate) fn runs(&self, channel: &str) -> bool {
        !is_leased(channel) || self.0.lock().contains_key(channel)
    }
}

/// Whether `channel` is shared through a lease (a platform account) rather
/// than this process's own (local chats, the terminal).
pub(crate) fn is_leased(channel: &str) -> bool {
    use switchboard_config::{ChannelKind, ChannelName};
    ChannelName::parse(channel).is_some_and(|n| n.kind != ChannelKind::Local)
}

/// Runs `channel` while this instance holds its lease: takes it when
/// free, renews it each heartbeat, stops the channel when it is lost.
pub(crate) struct Keeper {
    channel: Arc<dyn Channel>,
    intake: Arc<dyn Intake>,
    store: Store,
    fences: Fences,
    held: Option<(i64, Instant)>,
}

impl Keeper {
    pub(crate) fn new(channel: Arc<dyn Channel>, intake: Arc<dyn Intake>, store: Store, fences: Fences) -> Self {
        Self {
            channel,
            intake,
            store,
            fences,
            held: None,
        }
    }

    /// One look: take the lease (and start the channel) or renew it (or
    /// stop the channel when it was lost). The first look is awaited at
    /// start, so a single gateway's channels are up before it serves.
    pub(crate) async fn step(&mut self) {
        let name = self.channel.name().to_string();
        let lease = crate::cluster::instance::lease();
        match self.held {
            None => self.take(&name, lease).await,
            Some((generation, renewed)) => match self.store.leases().renew(&name, generation).await {
                Ok(true) => self.held = Some((generation, Instant::now())),
                Ok(false) => {
                    tracing::warn!(channel = %name, generation, "another instance took the channel; stopping it here");
                    self.give_up(&name).await;
                }
                // Out of touch with the database for longer than the
                // lease: someone else may run it now. Fail closed.
                Err(e) if renewed.elapsed() > lease => {
                    tracing::error!(channel = %name, error = %e, "cannot renew the channel's lease; stopping it here");
                    self.give_up(&name).await;
                }
                Err(e) => tracing::warn!(channel = %name, error = %e, "cannot renew the channel's lease; trying again"),
            },
        }
    }

    async fn take(&mut self, name: &str, lease: std::time::Duration) {
        let lease_ms = i64::try_from(lease.as_millis()).unwrap_or(i64::MAX);
        match self.store.leases().acquire(name, lease_ms).await {
            Ok(Some(generation)) => {
                self.fences.0.lock().insert(name.to_string(), generation);
                match self.channel.start(self.intake.clone()).await {
                    Ok(()) => {
                        tracing::info!(channel = %name, generation, "this instance runs the channel now");
                        self.held = Some((generation, Instant::now()));
                        // Its queued rows are this instance's to deliver now.
                        self.store.wake_outbox();
                    }
                    Err(e) => {
                        tracing::error!(channel = %name, error = %e, "the channel failed to start; giving it up for now");
                        self.fences.0.lock().remove(name);
                        let _ = self.store.leases().release(name, generation).await;
                    }
                }
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(channel = %name, error = %e, "cannot ask for the channel's lease"),
        }
    }

    async fn give_up(&mut self, name: &str) {
        self.fences.0.lock().remove(name);
        self.held = None;
        self.channel.stop().await;
    }

    /// Look again every heartbeat, until aborted.
    pub(crate) fn spawn(mut self) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(crate::cluster::instance::heartbeat()).await;
                self.step().await;
            }
        })
    }
}

/// Release every lease this instance holds (a clean stop: another
/// instance takes the channels at once).
pub(crate) async fn release_all(store: &Store, fences: &Fences) {
    let held: Vec<(String, i64)> = fences.0.lock().drain().collect();
    for (name, generation) in held {
        if let Err(e) = store.leases().release(&name, generation).await {
            tracing::warn!(channel = %name, error = %e, "cannot release the channel's lease");
        }
    }
}

/// A second `run` on one SQLite file would poll the same bots and reclaim
/// each other's work: refused, with what to do instead.
pub(crate) async fn refuse_second_run_on_sqlite(store: &Store, database_url: &str) -> anyhow::Result<()> {
    if !database_url.starts_with("sqlite:") {
        return Ok(());
    }
    let here = crate::cluster::instance::host();
    let now = store.now_ms();
    let other = store.instances().await?.into_iter().find(|i| {
        i.role == "run"
            && Some(i.id.as_str()) != store.instance_id()
            && !crate::cluster::instance::is_dead(i, &here, now)
    });
    if let Some(i) = other {
        anyhow::bail!(
            "another `switchboard run` (pid {} on {}) uses this SQLite database; one SQLite file serves one gateway. To run several gateways, give them one PostgreSQL database (database_url = \"postgres://...\"); `switchboard chat` beside a running gateway is fine",
            i.pid,
            i.host
        );
    }
    Ok(())
}

/// How far back (ms) cancellations are looked for again, for clock skew
/// between the writer's commit and this reader's last look.
const STOPS_OVERLAP_MS: i64 = 1_000;

/// Stop the work of runs of this instance cancelled elsewhere (their rows
/// say so; the tasks here are told). Woken by signals (see the store's
/// `signals`), never on a timer of its own.
pub(crate) fn spawn_remote_stops(runtime: Arc<switchboard_runtime::Runtime>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let store = runtime.store().clone();
        let mut since = store.now_ms();
        loop {
            let signalled = store.signalled();
            let now = store.now_ms();
            follow_the_cluster(&runtime).await;
            match store.runs().cancelled_since(since - STOPS_OVERLAP_MS).await {
                Ok(ids) => {
                    for id in ids {
                        if runtime.core().live().cancel_run(&id) {
                            tracing::info!(run_id = %id, "stopped a run cancelled in the control plane");
                        }
                    }
                    since = now;
                }
                Err(e) => tracing::warn!(error = %e, "cannot read runs cancelled from another gateway"),
            }
            store.sleep_until(signalled, None).await;
        }
    })
}

/// Follow what other gateways asked: the cluster-wide pause, and messages
/// for children running here.
async fn follow_the_cluster(runtime: &switchboard_runtime::Runtime) {
    let store = runtime.store();
    let live = runtime.core().live();
    // Every pause flag in one read: `paused` and `paused:<agent>`.
    match store
        .mail()
        .flags_starting_with(crate::commands::subagents::pause_flag(None).as_str())
        .await
    {
        Ok(flags) => {
            let paused_agents = live.paused_agents();
            for (name, value) in flags {
                let agent = name.strip_prefix("paused:");
                if agent.is_none() && name != "paused" {
                    continue;
                }
                let paused = value == "1";
                let now = match agent {
                    Some(a) => paused_agents.iter().any(|p| p == a),
                    None => live.is_paused_everywhere(),
                };
                if now != paused {
                    tracing::info!(
                        paused,
                        agent = agent.unwrap_or("every agent"),
                        "delegation pause changed on another gateway"
                    );
                    live.set_paused(agent, paused);
                }
            }
        }
        Err(e) => tracing::warn!(error = %e, "cannot read the cluster's pause flags"),
    }
    match store.mail().take_child_mail().await {
        Ok(mail) => {
            for (session_key, body) in mail {
                live.leave_note(&session_key, body);
            }
        }
        Err(e) => tracing::warn!(error = %e, "cannot read messages for children running here"),
    }
}
