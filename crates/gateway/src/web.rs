//! The `[web]` listeners: the local chats' API on `listen` and the
//! operator console beside it, or, with `console_listen`, on a listener of
//! its own (the one a reverse proxy forwards to; the local API's stays
//! private). Health and metrics (see `ops`) are served on `listen` and,
//! with `[telemetry] metrics_listen`, on a listener of their own.

use crate::console::Console;
use crate::ops::Ops;
use std::sync::Arc;
use switchboard_channel_local::LocalHub;
use switchboard_config::Config;

/// Serve the local API (and the console, when given) when there is one,
/// and the metrics listener when configured; the server tasks.
pub(crate) async fn serve(
    config: &Config,
    hub: &LocalHub,
    local_aliases: &[String],
    console: Option<Console>,
    ops: Arc<Ops>,
) -> anyhow::Result<Vec<tokio::task::JoinHandle<()>>> {
    let mut tasks = Vec::new();
    if let Some(listen) = &config.telemetry.metrics_listen {
        tasks.push(own_listener(listen, "[telemetry].metrics_listen", ops.clone().routes()).await?);
        tracing::info!(addr = %listen, "metrics and health listening on their own address");
    }
    if local_aliases.is_empty() && console.is_none() {
        return Ok(tasks);
    }
    let routes = console.map_or_else(axum::Router::new, |c| Arc::new(c).routes());
    let (with_api, own) = match &config.web.console_listen {
        Some(listen) if config.web.console => (axum::Router::new(), Some((listen.clone(), routes))),
        _ => (routes, None),
    };
    let (addr, task) = hub
        .serve_with(&config.web.listen, with_api.merge(ops.routes()))
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {} ([web].listen): {e}", config.web.listen))?;
    tracing::info!(%addr, channels = ?local_aliases, console = config.web.console && own.is_none(), "local API listening");
    tasks.push(task);
    if let Some((listen, routes)) = own {
        tasks.push(own_listener(&listen, "[web].console_listen", routes).await?);
        tracing::info!(addr = %listen, "console listening on its own address");
    }
    Ok(tasks)
}

/// Serve `routes` on `listen` (the setting named `key`).
async fn own_listener(listen: &str, key: &str, routes: axum::Router) -> anyhow::Result<tokio::task::JoinHandle<()>> {
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {listen} ({key}): {e}"))?;
    let key = key.to_string();
    Ok(tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, routes).await {
            tracing::error!(error = %e, listener = %key, "server stopped");
        }
    }))
}
