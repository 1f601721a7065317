//! `switchboard run`: the long-running gateway. It starts every enabled
//! channel it has an adapter for, the chat router, the approval broker and
//! the cron scheduler; SIGHUP re-reads and validates the configuration.

use crate::approvals::{RouteBroker, update_expired_prompts};
use crate::bootstrap;
use crate::channels::ChannelSet;
use crate::router::Router;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use switchboard_channel_local::LocalHub;
use switchboard_config::Config;
use switchboard_core::Channel;
use tokio::signal::unix::{SignalKind, signal};

/// A started gateway: its channels, runtime and background tasks.
pub(crate) struct Gateway {
    pub runtime: Arc<switchboard_runtime::Runtime>,
    /// The local channels, for benchmarks that write into them directly.
    #[cfg(feature = "bench")]
    pub hub: LocalHub,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    fences: crate::cluster::Fences,
}

impl Gateway {
    /// Stop every background task, give the channels up and close the store.
    pub(crate) async fn stop(self) {
        for t in &self.tasks {
            t.abort();
        }
        crate::cluster::release_all(self.runtime.store(), &self.fences).await;
        if let Err(e) = self.runtime.store().unregister_instance().await {
            tracing::warn!(error = %e, "cannot unregister this process");
        }
        self.runtime.store().close().await;
    }
}

/// The local channels `aliases`, with their tokens (one per alias, or one
/// per person) resolved.
fn local_hub(config: &switchboard_config::Config, aliases: &[String]) -> anyhow::Result<LocalHub> {
    let (mut tokens, mut people) = (std::collections::BTreeMap::new(), std::collections::BTreeMap::new());
    for alias in aliases {
        let local = &config.channels.local[alias];
        if let Some(t) = &local.token {
            let token = t
                .resolve()
                .map_err(|e| anyhow::anyhow!("channels.local.{alias}.token: {e}"))?;
            tokens.insert(alias.clone(), token);
        }
        let mut list = Vec::new();
        for (name, secret) in &local.people {
            let token = secret
                .resolve()
                .map_err(|e| anyhow::anyhow!("channels.local.{alias}.people.{name}: {e}"))?;
            list.push((token, name.clone()));
        }
        if !list.is_empty() {
            people.insert(alias.clone(), list);
        }
    }
    Ok(LocalHub::new(aliases).with_tokens(tokens).with_people(people))
}

/// Start everything `run` runs, from the configuration at `config_path`.
pub(crate) async fn start(config_path: &Path) -> anyhow::Result<Gateway> {
    let started = bootstrap::start(config_path, "run").await?;
    let runtime = started.runtime.clone();
    let config = runtime.config().clone();

    let mut channels = ChannelSet::default();
    let local_aliases: Vec<String> = config
        .channels
        .local
        .iter()
        .filter(|(_, c)| c.enabled)
        .map(|(a, _)| a.clone())
        .collect();
    let hub = local_hub(&config, &local_aliases)?;
    for ch in hub.channels() {
        channels.insert(ch.clone() as Arc<dyn Channel>);
    }
    for (alias, t) in config.channels.telegram.iter().filter(|(_, t)| t.enabled) {
        let name = format!("telegram.{alias}");
        let token = t
            .bot_token
            .resolve()
            .map_err(|e| anyhow::anyhow!("channels.telegram.{alias}.bot_token: {e}"))?;
        let webhook = match (&t.webhook_url, &t.webhook_listen, &t.webhook_secret) {
            (Some(url), Some(listen), Some(secret)) => Some(switchboard_channel_telegram::Webhook {
                url: url.clone(),
                listen: listen.clone(),
                secret: secret
                    .resolve()
                    .map_err(|e| anyhow::anyhow!("channels.telegram.{alias}.webhook_secret: {e}"))?,
            }),
            _ => None,
        };
        let channel = switchboard_channel_telegram::TelegramChannel::new(
            &name,
            &token,
            &t.api_url,
            webhook,
            std::time::Duration::from_secs(t.poll_timeout_secs),
        )
        .map_err(|e| anyhow::anyhow!("channels.telegram.{alias}: {e}"))?;
        channels.insert(Arc::new(channel));
    }
    for (alias, d) in config.channels.discord.iter().filter(|(_, d)| d.enabled) {
        let token = d
            .bot_token
            .resolve()
            .map_err(|e| anyhow::anyhow!("channels.discord.{alias}.bot_token: {e}"))?;
        let settings = switchboard_channel_discord::Settings {
            guilds: d.guilds.iter().filter_map(|g| g.parse().ok()).collect(),
            api_url: d.api_url.clone(),
            gateway_url: d.gateway_url.clone(),
        };
        let channel = switchboard_channel_discord::DiscordChannel::new(&format!("discord.{alias}"), &token, settings)
            .map_err(|e| anyhow::anyhow!("channels.discord.{alias}: {e}"))?;
        channels.insert(Arc::new(channel));
    }
    for (alias, m) in config.channels.matrix.iter().filter(|(_, m)| m.enabled) {
        let channel = crate::matrix::channel(alias, m)?;
        channels.insert(Arc::new(channel));
    }
    for (name, enabled) in config.channels.instances() {
        if enabled && channels.get(&name).is_none() {
            tracing::warn!(channel = %name, "configured, but this build has no adapter for it yet; it is not started");
        }
    }

    let health = channels.health().clone();
    // Messages a stopped process had taken but not answered; read before
    // any channel starts, so they are not mixed up with new ones.
    let pending = crate::inbox::upkeep::adopt(runtime.store(), &config).await?;
    // Channels are listening before the local API accepts anything, so no
    // message arrives before the gateway can take it.
    let (inbound_tx, inbound_rx) = tokio::sync::mpsc::channel(1024);
    let fences = crate::cluster::Fences::default();
    let intake: Arc<dyn switchboard_core::Intake> = Arc::new(crate::inbox::GatewayIntake::new(
        runtime.store().clone(),
        config.clone(),
        channels.clone(),
        inbound_tx,
        fences.clone(),
    ));
    let mut tasks = Vec::new();
    for ch in channels.all() {
        if crate::cluster::is_leased(ch.name()) {
            // Started once this instance holds the channel's lease.
            let mut keeper =
                crate::cluster::Keeper::new(ch.clone(), intake.clone(), runtime.store().clone(), fences.clone());
            keeper.step().await;
            tasks.push(keeper.spawn());
        } else {
            ch.start(intake.clone())
                .await
                .map_err(|e| anyhow::anyhow!("channel {} failed to start: {e}", ch.name()))?;
        }
    }
    let broker = Arc::new(RouteBroker::new(
        config.clone(),
        runtime.store().clone(),
        channels.clone(),
    ));
    runtime.set_route_broker(broker.clone());
    runtime.set_file_poster(Arc::new(crate::files::ChannelFiles::new(channels.clone())));
    // Decisions and stops typed to other gateways of the cluster (woken by
    // PostgreSQL notifications, and polled).
    tasks.extend(runtime.store().spawn_listener());
    tasks.push(broker.clone().spawn_remote_decisions());
    tasks.push(crate::cluster::spawn_remote_stops(runtime.clone()));
    update_expired_prompts(&channels, &started.expired_approvals).await;
    tasks.push(crate::outbox::spawn(
        runtime.store().clone(),
        channels.clone(),
        fences.clone(),
    ));
    let prompts = channels.clone();
    let router = Router::new((*runtime).clone(), channels, broker.clone());
    runtime.set_fence(Arc::new(crate::fence::StoreFence::new(runtime.store().clone())));
    let (stale_router, stale_runtime) = (router.clone(), runtime.clone());
    tasks.push(crate::instance::spawn_heartbeat(
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
    ));
    // The local API and the console share the `[web]` listener; messages
    // written to it before the router runs wait in the inbound queue.
    if !local_aliases.is_empty() || config.web.console {
        let console = if config.web.console {
            let console = crate::console::Console::new((*runtime).clone(), broker, router.clone(), health);
            Arc::new(console).routes()
        } else {
            axum::Router::new()
        };
        // With `console_listen` the console has a listener of its own (the
        // one a reverse proxy forwards to); the local API's stays private.
        let (with_api, own) = match &config.web.console_listen {
            Some(listen) if config.web.console => (axum::Router::new(), Some((listen.clone(), console))),
            _ => (console, None),
        };
        let (addr, task) = hub
            .serve_with(&config.web.listen, with_api)
            .await
            .map_err(|e| anyhow::anyhow!("cannot listen on {} ([web].listen): {e}", config.web.listen))?;
        tracing::info!(%addr, channels = ?local_aliases, console = config.web.console && own.is_none(), "local API listening");
        tasks.push(task);
        if let Some((listen, routes)) = own {
            let listener = tokio::net::TcpListener::bind(&listen)
                .await
                .map_err(|e| anyhow::anyhow!("cannot listen on {listen} ([web].console_listen): {e}"))?;
            tracing::info!(addr = %listen, "console listening on its own address");
            tasks.push(tokio::spawn(async move {
                if let Err(e) = axum::serve(listener, routes).await {
                    tracing::error!(error = %e, "console server stopped");
                }
            }));
        }
    }
    router.resume(pending).await;
    tasks.push(crate::inbox::upkeep::spawn(
        runtime.store().clone(),
        config.clone(),
        router.clone(),
    ));
    tasks.push(tokio::spawn(router.run(inbound_rx)));
    tasks.push(runtime.spawn_scheduler());
    tasks.push(runtime.spawn_archiver());
    tracing::info!(
        agents = ?config.enabled_agents(),
        database = %switchboard_store::redact_url(&config.database_url),
        "switchboard is running; Ctrl-C stops it"
    );
    Ok(Gateway {
        runtime,
        #[cfg(feature = "bench")]
        hub,
        tasks,
        fences,
    })
}

pub(crate) async fn run(config_path: &Path) -> anyhow::Result<ExitCode> {
    let gateway = start(config_path).await?;
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
    gateway.stop().await;
    Ok(ExitCode::SUCCESS)
}
