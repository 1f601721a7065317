//! The `[web]` listeners: the local chats' API on the owner-only UNIX
//! socket `socket` (with health and metrics), and, as an opt-in, on
//! loopback TCP `listen` beside the operator console (there only for
//! channels that know their people by token); or the console, with
//! `console_listen`, on a listener of its own (the one a reverse proxy
//! forwards to). Health and metrics (see `ops`) are also served on
//! `listen` and, with `[telemetry] metrics_listen`, on a listener of their
//! own.

use crate::console::Console;
use crate::ops::Ops;
use std::sync::Arc;
use switchboard_channel_local::LocalHub;
use switchboard_config::Config;

/// Serve the local API and health on the UNIX socket, the console and
/// health on TCP when configured, and the metrics listener when
/// configured; the server tasks.
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
    let socket = std::path::Path::new(&config.web.socket);
    tasks.push(
        hub.serve_unix(socket, ops.clone().routes())
            .await
            .map_err(|e| anyhow::anyhow!("cannot serve the local API on {} ([web].socket): {e}", socket.display()))?,
    );
    tracing::info!(socket = %socket.display(), channels = ?local_aliases, "local API listening on its UNIX socket");
    let console = console.map(|c| Arc::new(c).routes());
    let (with_listen, own) = match (&config.web.console_listen, console) {
        (Some(listen), Some(routes)) => (axum::Router::new(), Some((listen.clone(), routes))),
        (_, routes) => (routes.unwrap_or_default(), None),
    };
    if let Some(listen) = &config.web.listen {
        let (addr, task) = hub
            .serve_with(listen, with_listen.merge(ops.routes()))
            .await
            .map_err(|e| anyhow::anyhow!("cannot listen on {listen} ([web].listen): {e}"))?;
        tracing::info!(%addr, console = config.web.console && own.is_none(), "local TCP listener (local API only for channels with people tokens)");
        tasks.push(task);
    }
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
