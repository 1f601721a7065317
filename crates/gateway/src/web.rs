//! The `[web]` listeners: the local chats' API on `listen` and the
//! operator console beside it, or, with `console_listen`, on a listener of
//! its own (the one a reverse proxy forwards to; the local API's stays
//! private).

use crate::console::Console;
use std::sync::Arc;
use switchboard_channel_local::LocalHub;
use switchboard_config::Config;

/// Serve the local API (and the console, when given); the server tasks.
pub(crate) async fn serve(
    config: &Config,
    hub: &LocalHub,
    local_aliases: &[String],
    console: Option<Console>,
) -> anyhow::Result<Vec<tokio::task::JoinHandle<()>>> {
    let routes = console.map_or_else(axum::Router::new, |c| Arc::new(c).routes());
    let (with_api, own) = match &config.web.console_listen {
        Some(listen) if config.web.console => (axum::Router::new(), Some((listen.clone(), routes))),
        _ => (routes, None),
    };
    let mut tasks = Vec::new();
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
    Ok(tasks)
}
