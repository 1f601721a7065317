//! The listeners the local API is served on: the gateway's UNIX socket
//! (owner-only, in the data folder, out of every command's reach: the
//! sandbox refuses UNIX sockets and the folder lies outside the
//! workspace) and, as an opt-in, loopback TCP, where only channels that
//! know their people by token are served (see `api::guard`).

use crate::access::UnixPeer;
use crate::api::LocalHub;
use axum::Router;
use std::net::SocketAddr;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use tokio::net::UnixListener;

impl LocalHub {
    /// Bind TCP `listen` and serve until the task is aborted; returns the bound address.
    pub async fn serve(&self, listen: &str) -> std::io::Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
        self.serve_with(listen, Router::new()).await
    }

    /// `serve`, with more routes (the operator console) on the same listener.
    pub async fn serve_with(
        &self,
        listen: &str,
        more: Router,
    ) -> std::io::Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
        let listener = tokio::net::TcpListener::bind(listen).await?;
        let addr = listener.local_addr()?;
        let app = self.router().merge(more);
        let task = tokio::spawn(async move {
            let app = app.into_make_service_with_connect_info::<SocketAddr>();
            if let Err(e) = axum::serve(listener, app).await {
                tracing::error!(error = %e, "local channel server stopped");
            }
        });
        Ok((addr, task))
    }

    /// Serve on the UNIX socket `path` (its folder made owner-only when
    /// new, the socket itself owner-only), with `more` routes. A socket
    /// file left by a gateway that is gone is replaced; one that answers is
    /// another gateway's, and binding fails.
    pub async fn serve_unix(&self, path: &Path, more: Router) -> std::io::Result<tokio::task::JoinHandle<()>> {
        let listener = bind_unix(path).await?;
        let app = self.router().merge(more);
        let task = tokio::spawn(async move {
            let app = app.into_make_service_with_connect_info::<UnixPeer>();
            if let Err(e) = axum::serve(listener, app).await {
                tracing::error!(error = %e, "local channel socket server stopped");
            }
        });
        Ok(task)
    }
}

/// Bind `path` owner-only (see [`LocalHub::serve_unix`]).
async fn bind_unix(path: &Path) -> std::io::Result<UnixListener> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
        std::fs::create_dir_all(dir)?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        use std::os::unix::fs::FileTypeExt;
        if !meta.file_type().is_socket() {
            return Err(std::io::Error::other(format!(
                "{} exists and is not a socket; remove it or choose another [web].socket",
                path.display()
            )));
        }
        if tokio::net::UnixStream::connect(path).await.is_ok() {
            return Err(std::io::Error::other(format!(
                "another process serves {} (a gateway already running here?)",
                path.display()
            )));
        }
        std::fs::remove_file(path)?;
    }
    // Connecting needs write permission on the socket file: with the
    // usual umask it is never writable by others, even before this.
    let listener = UnixListener::bind(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(listener)
}
