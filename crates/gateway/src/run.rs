//! `switchboard run`: the long-running gateway. It starts every enabled
//! channel it has an adapter for, the chat router, the approval broker and
//! the cron scheduler; SIGHUP applies the configuration file again (see
//! `reload`).

use crate::approvals::{RouteBroker, update_expired_prompts};
use crate::bootstrap;
use crate::gateway::Gateway;
use crate::messages::router::Router;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use tokio::signal::unix::{SignalKind, signal};

/// Start everything `run` runs, from the configuration at `config_path`.
pub async fn start(config_path: &Path) -> anyhow::Result<Gateway> {
    let started = bootstrap::start(config_path, "run").await?;
    let runtime = started.runtime.clone();
    let config = runtime.config().clone();
    switchboard_telemetry::metrics::set_enabled(config.telemetry.metrics);
    if let Some(endpoint) = &config.telemetry.otlp_endpoint {
        tracing::info!(endpoint = %switchboard_mcp::redacted_url(endpoint), "exporting traces over OTLP/HTTP");
    }

    let crate::adapters::Adapters {
        channels,
        hub,
        local_aliases,
    } = crate::adapters::build(&config)?;
    let health = channels.health().clone();
    // Messages a stopped process had taken but not answered; read before
    // any channel starts, so they are not mixed up with new ones.
    let pending = crate::messages::inbox::upkeep::adopt(runtime.store(), &config).await?;
    // Channels are listening before the local API accepts anything, so no
    // message arrives before the gateway can take it.
    let (inbound_tx, inbound_rx) = tokio::sync::mpsc::channel(1024);
    let fences = crate::cluster::Fences::default();
    let pairing = Arc::new(crate::messages::pairing::Pairing::new(&runtime, &channels));
    let intake: Arc<dyn switchboard_core::Intake> = Arc::new(crate::messages::inbox::GatewayIntake::new(
        runtime.store().clone(),
        runtime.as_ref().into(),
        channels.clone(),
        inbound_tx,
        fences.clone(),
        pairing.clone(),
    ));
    let mut tasks = Vec::new();
    let keepers = start_channels(&channels, &intake, runtime.store(), &fences).await?;
    let broker = Arc::new(RouteBroker::new(
        runtime.as_ref(),
        runtime.store().clone(),
        channels.clone(),
    ));
    runtime.set_route_broker(broker.clone());
    runtime.set_file_poster(Arc::new(crate::messages::files::ChannelFiles::new(channels.clone())));
    // Decisions and stops typed to other gateways of the cluster, and
    // outbox rows they queued, wake the watchers (see the store's signals).
    tasks.push(runtime.store().spawn_listener());
    tasks.push(broker.clone().spawn_remote_decisions());
    tasks.push(crate::cluster::spawn_remote_stops(runtime.clone()));
    update_expired_prompts(&channels, &started.expired_approvals).await;
    tasks.push(crate::messages::outbox::spawn(
        runtime.store().clone(),
        channels.clone(),
        fences.clone(),
    ));
    let prompts = channels.clone();
    let router = Router::new((*runtime).clone(), channels.clone(), broker.clone(), pairing.clone());
    runtime.set_fence(Arc::new(crate::cluster::fence::StoreFence::new(
        runtime.store().clone(),
    )));
    tasks.push(heartbeat(&runtime, &router, prompts));
    // Messages written to the local API before the router runs wait in
    // the inbound queue.
    let ops = Arc::new(crate::ops::Ops::new((*runtime).clone(), health.clone(), fences.clone()));
    let console = config
        .web
        .console
        .then(|| crate::console::Console::new((*runtime).clone(), broker, router.clone(), health));
    tasks.extend(crate::web::serve(&config, &hub, &local_aliases, console, ops).await?);
    router.resume(pending).await;
    // What starts new turns: stopped first at a stop.
    let takers = vec![upkeep(&runtime, &router), tokio::spawn(router.clone().run(inbound_rx))];
    let scheduler = runtime.spawn_scheduler();
    tasks.push(runtime.spawn_archiver());
    runtime.core().mcp().start_eager();
    tracing::info!(
        agents = ?config.enabled_agents(),
        database = %switchboard_store::redact_url(&config.database_url),
        "switchboard is running; Ctrl-C stops it"
    );
    Ok(Gateway {
        runtime,
        hub,
        tasks,
        fences,
        channels,
        intake,
        keepers,
        scheduler,
        config_path: config_path.to_path_buf(),
        router,
        takers,
    })
}

/// Start every channel: a leased one (docs/operations.md, clusters) once
/// this instance holds its lease, through its keeper; the others now.
async fn start_channels(
    channels: &crate::channels::ChannelSet,
    intake: &Arc<dyn switchboard_core::Intake>,
    store: &switchboard_store::Store,
    fences: &crate::cluster::Fences,
) -> anyhow::Result<std::collections::HashMap<String, tokio::task::JoinHandle<()>>> {
    let mut keepers = std::collections::HashMap::new();
    for ch in channels.all() {
        if crate::cluster::is_leased(ch.name()) {
            let keeper = crate::reload::keep(ch.clone(), intake, store, fences).await;
            keepers.insert(ch.name().to_string(), keeper);
        } else {
            ch.start(intake.clone())
                .await
                .map_err(|e| anyhow::anyhow!("channel {} failed to start: {e}", ch.name()))?;
        }
    }
    Ok(keepers)
}

/// This instance's heartbeat: expired prompts are edited; taken for dead,
/// it stops every turn and run it still had.
fn heartbeat(
    runtime: &Arc<switchboard_runtime::Runtime>,
    router: &Arc<Router>,
    prompts: crate::channels::ChannelSet,
) -> tokio::task::JoinHandle<()> {
    let (stale_router, stale_runtime) = (router.clone(), runtime.clone());
    crate::cluster::instance::spawn_heartbeat(
        runtime.store().clone(),
        "run",
        move |rows| {
            let channels = prompts.clone();
            Box::pin(async move { update_expired_prompts(&channels, &rows).await })
        },
        move || {
            let turns = stale_router.cancel_all_turns();
            let runs = stale_runtime.core().live().cancel_all_runs();
            tracing::warn!(
                turns,
                runs,
                "stopped every turn and run of this instance (their waiting approvals close with them)"
            );
        },
    )
}

/// Inbox upkeep: messages adopted from stopped instances go to the router.
fn upkeep(runtime: &Arc<switchboard_runtime::Runtime>, router: &Arc<Router>) -> tokio::task::JoinHandle<()> {
    let adopter = router.clone();
    crate::messages::inbox::upkeep::spawn(runtime.store().clone(), runtime.as_ref().into(), move |pending| {
        let router = adopter.clone();
        Box::pin(async move { router.resume(pending).await })
    })
}

pub(crate) async fn run(config_path: &Path) -> anyhow::Result<ExitCode> {
    // Before anything else: a SIGHUP during start-up (the instance is
    // registered early) must not end the process; it is applied once the
    // gateway runs.
    let mut hup = signal(SignalKind::hangup())?;
    let mut term = signal(SignalKind::terminate())?;
    let mut gateway = start(config_path).await?;
    loop {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => break,
            _ = term.recv() => break,
            _ = hup.recv() => gateway.reload().await,
        }
    }
    tracing::info!("stopping");
    // A second signal stops at once (turns under way are cut, and taken
    // up by the next instance that looks).
    tokio::select! {
        () = gateway.stop() => {}
        _ = tokio::signal::ctrl_c() => tracing::warn!("stopping at once"),
        _ = term.recv() => tracing::warn!("stopping at once"),
    }
    Ok(ExitCode::SUCCESS)
}
