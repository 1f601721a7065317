//! Opening one connection to a server: a kernel-confined child process
//! spoken to over its stdin/stdout, or a streamable HTTP endpoint; then the
//! `initialize` handshake within `startup_timeout_secs`.

use parking_lot::Mutex;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use switchboard_config::McpServerConfig;
use switchboard_sandbox::{Confined, Network, Sandbox};

/// What the client does with what the server sends on its own.
pub(crate) struct Handler {
    /// Called on `notifications/tools/list_changed`.
    pub(crate) on_list_changed: Arc<dyn Fn() + Send + Sync>,
}

impl ClientHandler for Handler {
    fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) -> impl Future<Output = ()> + Send + '_ {
        (self.on_list_changed)();
        std::future::ready(())
    }

    fn get_info(&self) -> ClientConfig {
        // The last version with the `initialize` handshake: what the
        // servers people run today speak (and where list_changed reaches
        // `on_tool_list_changed`).
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("switchboard", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }
}

impl Conn {
    /// Whether the server can no longer be reached (its process died, its
    /// pipe closed).
    pub(crate) fn is_closed(&self) -> bool {
        self.service.is_closed() || self.service.peer().is_transport_closed()
    }
}

/// One live connection. Dropping it ends the session, kills the child
/// (and whatever it started, with its cgroup) and removes its temporary folder.
pub(crate) struct Conn {
    pub(crate) service: RunningService<RoleClient, Handler>,
    /// The last line the child wrote to stderr (said when it dies).
    pub(crate) stderr_tail: Arc<Mutex<String>>,
    _child: Option<tokio::process::Child>,
    _confined: Option<Confined>,
}

/// Where a stdio server runs and how it is confined.
pub(crate) struct Confinement<'a> {
    pub(crate) workspace: &'a Path,
    pub(crate) sandbox: &'a Sandbox,
}

/// Start `config`'s server and initialize a session with it.
pub(crate) async fn open(
    name: &str,
    config: &McpServerConfig,
    confinement: Confinement<'_>,
    handler: Handler,
) -> Result<Conn, String> {
    let startup = Duration::from_secs(config.startup_timeout_secs);
    if let Some(url) = &config.url {
        let transport = http_transport(url, config)?;
        let url = redacted(url);
        let service = tokio::time::timeout(startup, handler.serve(transport))
            .await
            .map_err(|_| {
                format!(
                    "the MCP server '{name}' at {url} did not answer initialize within {}s (startup_timeout_secs)",
                    config.startup_timeout_secs
                )
            })?
            .map_err(|e| format!("the MCP server '{name}' at {url} could not be initialized: {e}"))?;
        return Ok(Conn {
            service,
            stderr_tail: Arc::default(),
            _child: None,
            _confined: None,
        });
    }
    let (mut child, confined) = spawn(name, config, &confinement)?;
    let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
        return Err(format!("the MCP server '{name}' started without pipes"));
    };
    let stderr_tail: Arc<Mutex<String>> = Arc::default();
    if let Some(stderr) = child.stderr.take() {
        tokio::spawn(keep_stderr_tail(name.to_string(), stderr, stderr_tail.clone()));
    }
    let service = match tokio::time::timeout(startup, handler.serve((stdout, stdin))).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => {
            let said = stderr_tail.lock().clone();
            return Err(format!(
                "the MCP server '{name}' could not be initialized: {e}{}",
                said_suffix(&said)
            ));
        }
        Err(_) => {
            return Err(format!(
                "the MCP server '{name}' did not answer initialize within {}s (startup_timeout_secs); check its command, or raise the timeout",
                config.startup_timeout_secs
            ));
        }
    };
    Ok(Conn {
        service,
        stderr_tail,
        _child: Some(child),
        _confined: Some(confined),
    })
}

/// Read what the server writes to stderr in bounded pieces (a line
/// without end costs nothing), logging lines at debug and keeping the last
/// one, without control characters, for error messages.
async fn keep_stderr_tail(server: String, mut stderr: tokio::process::ChildStderr, tail: Arc<Mutex<String>>) {
    use tokio::io::AsyncReadExt;
    let mut chunk = vec![0u8; 4096];
    let mut line = String::new();
    while let Ok(n) = stderr.read(&mut chunk).await {
        if n == 0 {
            break;
        }
        for piece in String::from_utf8_lossy(&chunk[..n]).split_inclusive('\n') {
            if line.len() < TAIL {
                line.extend(piece.chars().filter(|c| !c.is_control()).take(TAIL - line.len()));
            }
            if piece.ends_with('\n') {
                tracing::debug!(server = %server, "{line}");
                if !line.trim().is_empty() {
                    *tail.lock() = std::mem::take(&mut line);
                }
                line.clear();
            }
        }
    }
}

/// Characters of the last stderr line kept.
const TAIL: usize = 300;

/// `scheme://host:port` of `url`: said in messages instead of the whole
/// URL, whose path or query may carry a key.
pub fn redacted(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(u) => format!(
            "{}://{}{}",
            u.scheme(),
            u.host_str().unwrap_or("?"),
            u.port().map(|p| format!(":{p}")).unwrap_or_default()
        ),
        Err(_) => "(an invalid URL)".into(),
    }
}

/// `text` with every trace of `url` beyond its scheme, host and port
/// taken out: the whole URL (as written and as parsed) becomes
/// `scheme://host:port`, and its query, user name and password, wherever
/// they still appear, become `[redacted]`. Errors of HTTP clients quote the
/// whole URL; this runs before any of them is logged, stored, shown or
/// given to the model.
pub(crate) fn scrub(text: &str, url: &str) -> String {
    let Ok(parsed) = reqwest::Url::parse(url) else {
        return text.replace(url, "(an invalid URL)");
    };
    let short = redacted(url);
    let mut out = text.replace(url, &short).replace(parsed.as_str(), &short);
    let mut secrets: Vec<&str> = Vec::new();
    if let Some(q) = parsed.query().filter(|q| !q.is_empty()) {
        secrets.push(q);
    }
    if let Some(p) = parsed.password().filter(|p| !p.is_empty()) {
        secrets.push(p);
    }
    if !parsed.username().is_empty() {
        secrets.push(parsed.username());
    }
    for secret in secrets {
        out = out.replace(secret, "[redacted]");
    }
    out
}

/// `; it said: <line>` when the server wrote something to stderr.
pub(crate) fn said_suffix(line: &str) -> String {
    if line.is_empty() {
        String::new()
    } else {
        format!("; it said: {line}")
    }
}

fn http_transport(
    url: &str,
    config: &McpServerConfig,
) -> Result<StreamableHttpClientTransport<reqwest::Client>, String> {
    let mut headers = HashMap::new();
    for (key, secret) in &config.headers {
        let value = secret.resolve().map_err(|e| format!("header {key}: {e}"))?;
        let name = reqwest::header::HeaderName::from_bytes(key.as_bytes())
            .map_err(|_| format!("'{key}' is not an HTTP header name"))?;
        let value = reqwest::header::HeaderValue::from_str(&value)
            .map_err(|_| format!("the value of header {key} is not valid in HTTP"))?;
        headers.insert(name, value);
    }
    // No redirects: headers (tokens) are never replayed to another host,
    // and the gateway is never sent on to an address nobody configured.
    let client = switchboard_http::client_builder()
        .redirect(reqwest::redirect::Policy::none())
        .pool_max_idle_per_host(0)
        .connect_timeout(Duration::from_secs(config.startup_timeout_secs))
        .build()
        .map_err(|e| format!("cannot make an HTTP client: {e}"))?;
    let mut cfg = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    cfg.custom_headers = headers;
    Ok(StreamableHttpClientTransport::with_client(client, cfg))
}

/// Start the server's program confined to its workspace, with only the
/// environment the operator gave it (and `PATH`, `LANG`; `HOME` is its workspace).
fn spawn(
    name: &str,
    config: &McpServerConfig,
    confinement: &Confinement<'_>,
) -> Result<(tokio::process::Child, Confined), String> {
    let program = config.command.as_deref().unwrap_or_default();
    let workspace = std::fs::create_dir_all(confinement.workspace)
        .and_then(|()| confinement.workspace.canonicalize())
        .map_err(|e| {
            format!(
                "cannot make the workspace {} of MCP server '{name}': {e}",
                confinement.workspace.display()
            )
        })?;
    let network = match config.network {
        switchboard_config::NetworkAccess::None => Network::None,
        switchboard_config::NetworkAccess::Loopback => Network::Loopback,
        switchboard_config::NetworkAccess::Any => Network::Any,
    };
    let read: Vec<PathBuf> = config.read_paths.iter().map(PathBuf::from).collect();
    let mut confined = confinement
        .sandbox
        .confine_reading(&workspace, network, &read)
        .map_err(|e| format!("the MCP server '{name}' may not start: {e}"))?;
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(&config.args)
        .current_dir(&workspace)
        .env_clear()
        .env("HOME", &workspace)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for key in ["PATH", "LANG"] {
        if let Ok(v) = std::env::var(key) {
            cmd.env(key, v);
        }
    }
    for (key, secret) in &config.env {
        let value = secret
            .resolve()
            .map_err(|e| format!("[mcp_servers.{name}.env] {key}: {e}"))?;
        cmd.env(key, value);
    }
    // The server, and everything it starts (its PID namespace), dies with
    // the gateway, even when the gateway is killed (kill -9 runs no
    // destructor). Spawned on a runtime worker thread, which lives as long
    // as the gateway (the parent-death signal follows the spawning thread).
    confined.die_with_gateway();
    confined.apply(&mut cmd);
    let child = cmd
        .spawn()
        .map_err(|e| format!("cannot start the MCP server '{name}' ({program}): {e}"))?;
    Ok((child, confined))
}
