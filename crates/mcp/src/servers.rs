//! Every configured server of a gateway.

use crate::error::McpError;
use crate::listing::ToolInfo;
use crate::output::CallOutput;
use crate::server::Server;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use switchboard_config::{McpServerConfig, McpStart};
use switchboard_sandbox::Sandbox;
use tokio_util::sync::CancellationToken;

/// The enabled servers, by name. Cheap to clone.
#[derive(Clone, Default)]
pub struct McpServers {
    servers: Arc<BTreeMap<String, Arc<Server>>>,
}

impl McpServers {
    /// The enabled servers of `configs`; stdio servers work in their
    /// `workspace` or `<workspace_dir>/.mcp/<name>`, confined by `sandbox`
    /// (without its CPU-time limit: a server lives as long as the gateway).
    pub fn new(configs: &BTreeMap<String, McpServerConfig>, workspace_dir: &Path, sandbox: &Sandbox) -> Self {
        let mut settings = sandbox.settings();
        settings.limits.max_cpu_secs = u64::MAX;
        let sandbox = Sandbox::new(settings);
        let servers = configs
            .iter()
            .filter(|(_, c)| c.enabled)
            .map(|(name, c)| {
                let workspace = c
                    .workspace
                    .as_ref()
                    .map_or_else(|| workspace_dir.join(".mcp").join(name), Into::into);
                (name.clone(), Server::new(name, c.clone(), workspace, sandbox.clone()))
            })
            .collect();
        Self {
            servers: Arc::new(servers),
        }
    }

    /// Whether no server is configured.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// Start the `eager` servers in the background.
    pub fn start_eager(&self) {
        for server in self.servers.values().filter(|s| s.config.start == McpStart::Eager) {
            let server = server.clone();
            tokio::spawn(async move {
                let _ = server.connection(true).await;
            });
        }
    }

    /// Make sure the servers named in `names` have been started (lazy
    /// servers start here, on the first turn that may use them, which
    /// waits for them once). A server that failed before is retried in the
    /// background, after its pause: no later turn waits for a broken server.
    pub async fn ready(&self, names: &[String]) {
        let mut first = Vec::new();
        for server in names.iter().filter_map(|n| self.servers.get(n)) {
            if server.is_running() || !server.tools().is_empty() {
                continue;
            }
            if server.ever_failed() {
                let server = server.clone();
                tokio::spawn(async move {
                    let _ = server.connection(false).await;
                });
            } else {
                first.push(async move {
                    let _ = server.connection(false).await;
                });
            }
        }
        futures::future::join_all(first).await;
    }

    /// The tools of the server `name` as last listed.
    pub fn tools(&self, name: &str) -> Arc<Vec<ToolInfo>> {
        self.servers.get(name).map(|s| s.tools()).unwrap_or_default()
    }

    /// Call `tool` of `server` (see `Server::call`).
    pub async fn call(
        &self,
        server: &str,
        tool: &str,
        args: Value,
        cancel: &CancellationToken,
    ) -> Result<CallOutput, McpError> {
        match self.servers.get(server) {
            Some(s) => s.call(tool, args, cancel).await.map_err(McpError::Failed),
            None => Err(McpError::NotConfigured(server.to_string())),
        }
    }

    /// Start `name` once, list its tools and stop it (`switchboard check --probe`).
    pub async fn probe(&self, name: &str) -> Result<Vec<ToolInfo>, McpError> {
        let server = self
            .servers
            .get(name)
            .ok_or_else(|| McpError::NotConfigured(name.to_string()))?;
        server.connection(true).await.map_err(McpError::Failed)?;
        let tools = server.tools().as_ref().clone();
        server.stop().await;
        Ok(tools)
    }

    /// The names of the enabled servers, whether each is running, and why
    /// it could not be used last.
    pub fn status(&self) -> Vec<(String, bool, Option<String>)> {
        self.servers
            .values()
            .map(|s| (s.name.clone(), s.is_running(), s.last_error()))
            .collect()
    }

    /// Stop every server (the gateway is shutting down).
    pub async fn shutdown(&self) {
        for server in self.servers.values() {
            server.stop().await;
        }
    }
}
