//! One configured server, supervised: started on first use (or at start),
//! started again on a timer after it fails (1, 2, 4 … 60 s, also when no
//! turn asks for it), one log line per outage, its tool list kept and
//! refreshed when it says the list changed — where a tool's risk may go up
//! but never down until the server is made anew (the gateway restarts;
//! `[mcp_servers]` is not reloaded live). Errors of an HTTP server never carry more of its
//! URL than scheme, host and port.

use crate::connect::{self, Confinement, Conn, Handler};
use crate::listing::{ToolInfo, tools_from};
use crate::output::{self, CallOutput};
use parking_lot::{Mutex, RwLock};
use rmcp::model::{CallToolRequestParams, ClientRequest, CustomRequest, Request, ServerResult};
use rmcp::service::{PeerRequestOptions, ServiceError};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};
use switchboard_config::{McpServerConfig, Risk};
use switchboard_sandbox::Sandbox;
use tokio_util::sync::CancellationToken;

/// Pauses between start attempts after a failure: 1 s, 2 s, 4 s ... 60 s.
const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// How long a tool-list refresh waits for more change notifications.
const REFRESH_PAUSE: Duration = Duration::from_millis(200);

/// The longest a cancellation notice may take to send (a server that
/// stopped reading its input cannot hold a stopped turn).
const NOTICE_TIMEOUT: Duration = Duration::from_secs(2);

/// Pages of `tools/list` read at most (a server that pages forever stops there).
const MAX_PAGES: usize = 50;

pub(crate) struct Server {
    pub(crate) name: String,
    pub(crate) config: McpServerConfig,
    workspace: PathBuf,
    sandbox: Sandbox,
    me: Weak<Server>,
    /// The live connection; held while starting so starts never overlap.
    conn: tokio::sync::Mutex<Option<Arc<Conn>>>,
    tools: RwLock<Arc<Vec<ToolInfo>>>,
    health: Mutex<Health>,
    /// A tool-list refresh is waiting to run.
    refresh_pending: AtomicBool,
    /// A start is scheduled on the retry timer.
    retry_scheduled: AtomicBool,
    /// The gateway stopped it: no more starts on the timer.
    stopped: AtomicBool,
    /// The highest risk each tool has had since this server was made.
    floor: Mutex<HashMap<String, Risk>>,
}

#[derive(Default)]
struct Health {
    /// Start attempts failed in a row.
    failures: u32,
    /// No start is tried (except for a call) before this.
    retry_at: Option<Instant>,
    /// This outage was logged.
    logged: bool,
    /// The last reason it could not be used.
    last_error: Option<String>,
}

impl Server {
    pub(crate) fn new(name: &str, config: McpServerConfig, workspace: PathBuf, sandbox: Sandbox) -> Arc<Self> {
        Arc::new_cyclic(|me| Self {
            name: name.to_string(),
            config,
            workspace,
            sandbox,
            me: me.clone(),
            conn: tokio::sync::Mutex::new(None),
            tools: RwLock::new(Arc::default()),
            health: Mutex::new(Health::default()),
            refresh_pending: AtomicBool::new(false),
            retry_scheduled: AtomicBool::new(false),
            stopped: AtomicBool::new(false),
            floor: Mutex::new(HashMap::new()),
        })
    }

    /// `text` without the secret parts of an HTTP server's URL (see
    /// `connect::scrub`).
    fn scrub(&self, text: String) -> String {
        match &self.config.url {
            Some(url) => connect::scrub(&text, url),
            None => text,
        }
    }

    /// `tools` with no risk below what each had before in this server's
    /// life: a server cannot lower a tool's risk while it runs (by
    /// re-listing it with a milder annotation); a higher one is kept.
    fn risk_never_lower(&self, mut tools: Vec<ToolInfo>) -> Vec<ToolInfo> {
        let mut floor = self.floor.lock();
        for t in &mut tools {
            match floor.get(&t.name) {
                Some(&was) if was > t.risk => {
                    tracing::warn!(server = %self.name, tool = %t.name, was = ?was, now = ?t.risk, "an MCP tool's listed risk went down while the server ran; the higher one holds until the gateway restarts");
                    t.risk = was;
                }
                _ => {
                    floor.insert(t.name.clone(), t.risk);
                }
            }
        }
        tools
    }

    /// Its tools as last listed (empty before its first start).
    pub(crate) fn tools(&self) -> Arc<Vec<ToolInfo>> {
        self.tools.read().clone()
    }

    /// Whether a connection is up now.
    pub(crate) fn is_running(&self) -> bool {
        self.conn
            .try_lock()
            .map(|c| c.as_ref().is_some_and(|c| !c.is_closed()))
            .unwrap_or(false)
    }

    /// Whether a start failed since it last ran.
    pub(crate) fn ever_failed(&self) -> bool {
        self.health.lock().failures > 0
    }

    /// Why it could not be used last, if it could not.
    pub(crate) fn last_error(&self) -> Option<String> {
        self.health.lock().last_error.clone()
    }

    /// A live connection: the current one, or a new one. Unless `now`, a
    /// server that failed recently is not retried before its pause ends.
    pub(crate) async fn connection(&self, now: bool) -> Result<Arc<Conn>, String> {
        let mut slot = self.conn.lock().await;
        if let Some(c) = slot.as_ref() {
            if !c.is_closed() {
                return Ok(c.clone());
            }
            let said = connect::said_suffix(&c.stderr_tail.lock());
            *slot = None;
            self.outage(format!("the MCP server '{}' stopped{said}", self.name));
        }
        if !now {
            let h = self.health.lock();
            if h.retry_at.is_some_and(|t| Instant::now() < t) {
                return Err(h.last_error.clone().unwrap_or_default());
            }
        }
        let me = self.me.clone();
        let handler = Handler {
            // Notifications are coalesced: one refresh waits at a time,
            // however many arrive (a storm costs one listing per pause).
            on_list_changed: Arc::new(move || {
                if let Some(server) = me.upgrade()
                    && !server.refresh_pending.swap(true, Ordering::AcqRel)
                {
                    tokio::spawn(async move {
                        tokio::time::sleep(REFRESH_PAUSE).await;
                        server.refresh_pending.store(false, Ordering::Release);
                        server.refresh().await;
                    });
                }
            }),
        };
        let confinement = Confinement {
            workspace: &self.workspace,
            sandbox: &self.sandbox,
        };
        let conn = match connect::open(&self.name, &self.config, confinement, handler).await {
            Ok(c) => Arc::new(c),
            Err(why) => return Err(self.outage(why)),
        };
        match self.list(&conn).await {
            Ok(tools) => *self.tools.write() = Arc::new(self.risk_never_lower(tools)),
            Err(why) => {
                return Err(self.outage(format!("the MCP server '{}' did not list its tools: {why}", self.name)));
            }
        }
        let mut h = self.health.lock();
        if h.logged {
            tracing::info!(server = %self.name, "MCP server is back");
        } else {
            tracing::info!(server = %self.name, tools = self.tools.read().len(), "MCP server started");
        }
        *h = Health::default();
        *slot = Some(conn.clone());
        Ok(conn)
    }

    /// Note a failure: one warning per outage, and the next start on the
    /// timer after a pause. Returns the reason, scrubbed.
    fn outage(&self, why: String) -> String {
        let why = self.scrub(why);
        let mut h = self.health.lock();
        h.failures = h.failures.saturating_add(1);
        let pause = Duration::from_secs(1u64 << h.failures.saturating_sub(1).min(6)).min(MAX_BACKOFF);
        if !h.logged {
            tracing::warn!(server = %self.name, %why, "MCP server unavailable; it is started again after 1, 2, 4 ... 60 s");
            h.logged = true;
        }
        h.retry_at = Some(Instant::now() + pause);
        h.last_error = Some(why.clone());
        drop(h);
        self.retry_after(pause);
        why
    }

    /// Start the server again after `pause`, whether or not a turn asks
    /// for it (one timer at a time; none once the gateway stopped it).
    fn retry_after(&self, pause: Duration) {
        if self.stopped.load(Ordering::Acquire) || self.retry_scheduled.swap(true, Ordering::AcqRel) {
            return;
        }
        let me = self.me.clone();
        tokio::spawn(async move {
            tokio::time::sleep(pause).await;
            let Some(server) = me.upgrade() else {
                return;
            };
            server.retry_scheduled.store(false, Ordering::Release);
            if !server.stopped.load(Ordering::Acquire) && !server.is_running() {
                // A failure schedules the next try (`outage`).
                let _ = server.connection(true).await;
            }
        });
    }

    /// Its tools, within `startup_timeout_secs` (a server that answers
    /// `initialize` and then nothing holds nobody up).
    async fn list(&self, conn: &Conn) -> Result<Vec<ToolInfo>, String> {
        let secs = self.config.startup_timeout_secs;
        tokio::time::timeout(Duration::from_secs(secs), list_pages(conn, &self.name, &self.config))
            .await
            .unwrap_or_else(|_| Err(format!("no answer to tools/list within {secs}s (startup_timeout_secs)")))
    }

    /// List the tools again (the server said they changed).
    async fn refresh(self: Arc<Self>) {
        let Some(conn) = self.conn.lock().await.clone() else {
            return;
        };
        match self.list(&conn).await {
            Ok(mut tools) => {
                // A tool that appears while the server runs (a renamed one,
                // say) is rated high unless `risk` names it: a rename must
                // not slip a dangerous tool under a milder "*" entry.
                let before = self.tools();
                for t in tools.iter_mut().filter(|t| !before.iter().any(|b| b.name == t.name)) {
                    if !self.config.risk.contains_key(&t.name) && t.risk != Risk::High {
                        tracing::warn!(server = %self.name, tool = %t.name, "a tool appeared while the MCP server ran; it is rated high until the gateway restarts");
                        t.risk = Risk::High;
                    }
                }
                tracing::info!(server = %self.name, tools = tools.len(), "MCP server's tool list changed");
                *self.tools.write() = Arc::new(self.risk_never_lower(tools));
            }
            Err(why) => {
                let why = self.scrub(why);
                tracing::warn!(server = %self.name, %why, "MCP server's changed tool list could not be read");
            }
        }
    }

    /// Call `tool` with `args`; cancelled (and the server told so) when
    /// `cancel` fires or `timeout_secs` pass. Errors are sentences for the model.
    pub(crate) async fn call(&self, tool: &str, args: Value, cancel: &CancellationToken) -> Result<CallOutput, String> {
        let conn = tokio::select! {
            c = self.connection(true) => c?,
            () = cancel.cancelled() => return Err(format!("{}.{tool} was cancelled: the turn was stopped", self.name)),
        };
        let arguments = match args {
            Value::Object(map) => map,
            _ => serde_json::Map::new(),
        };
        let request = ClientRequest::CallToolRequest(Request::new(
            CallToolRequestParams::new(tool.to_string()).with_arguments(arguments),
        ));
        let mut handle = conn
            .service
            .peer()
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
            .map_err(|e| self.lost(&conn, &e))?;
        let timeout = Duration::from_secs(self.config.timeout_secs);
        let answer = tokio::select! {
            a = &mut handle.rx => a,
            () = tokio::time::sleep(timeout) => {
                let _ = tokio::time::timeout(NOTICE_TIMEOUT, handle.cancel(Some("timed out".into()))).await;
                tracing::warn!(server = %self.name, tool, "MCP call timed out; the server was told to cancel it");
                return Err(format!("{}.{tool} did not answer within {}s (timeout_secs) and was cancelled", self.name, self.config.timeout_secs));
            }
            () = cancel.cancelled() => {
                let _ = tokio::time::timeout(NOTICE_TIMEOUT, handle.cancel(Some("the turn was stopped".into()))).await;
                tracing::info!(server = %self.name, tool, "MCP call cancelled; the server was told");
                return Err(format!("{}.{tool} was cancelled: the turn was stopped", self.name));
            }
        };
        match answer {
            Ok(Ok(ServerResult::CallToolResult(r))) => {
                Ok(output::from_result(&serde_json::to_value(r).unwrap_or_default()))
            }
            Ok(Ok(ServerResult::CustomResult(r))) => Ok(output::from_result(&r.0)),
            Ok(Ok(_)) => Err(format!(
                "{}.{tool}: the server's answer is not a tool result",
                self.name
            )),
            Ok(Err(ServiceError::McpError(e))) => Err(output::cap(
                self.scrub(format!("{}.{tool} failed: {}", self.name, e.message)),
            )),
            Ok(Err(e)) => Err(self.lost(&conn, &e)),
            Err(_) => Err(self.lost(&conn, &ServiceError::TransportClosed)),
        }
    }

    /// The sentence for a call the connection failed under; the connection
    /// is dropped when it is gone, so the next call starts the server again.
    fn lost(&self, conn: &Arc<Conn>, e: &ServiceError) -> String {
        let said = connect::said_suffix(&conn.stderr_tail.lock());
        let why = self.scrub(format!(
            "the MCP server '{}' stopped during the call ({e}){said}",
            self.name
        ));
        if conn.is_closed() || matches!(e, ServiceError::TransportClosed | ServiceError::TransportSend(_)) {
            if let Ok(mut slot) = self.conn.try_lock()
                && slot.as_ref().is_some_and(|c| Arc::ptr_eq(c, conn))
            {
                *slot = None;
            }
            self.outage(why.clone());
        }
        output::cap(format!("{why}; the next call starts it again"))
    }

    /// End the session and the process.
    pub(crate) async fn stop(&self) {
        self.stopped.store(true, Ordering::Release);
        // A start under way holds the slot at most its startup timeouts;
        // shutting down does not wait for it (the process dies with its handle).
        let Ok(mut slot) = tokio::time::timeout(NOTICE_TIMEOUT, self.conn.lock()).await else {
            return;
        };
        let conn = slot.take();
        drop(slot);
        if let Some(conn) = conn
            && let Ok(conn) = Arc::try_unwrap(conn)
        {
            let _ = tokio::time::timeout(Duration::from_secs(2), conn.service.cancel()).await;
        }
    }
}

/// Every tool the server lists, page after page.
async fn list_pages(conn: &Conn, name: &str, config: &McpServerConfig) -> Result<Vec<ToolInfo>, String> {
    let mut raw: Vec<Value> = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let params = match &cursor {
            Some(c) => json!({ "cursor": c }),
            None => json!({}),
        };
        let request = ClientRequest::CustomRequest(CustomRequest::new("tools/list", Some(params)));
        let answer = conn
            .service
            .peer()
            .send_request(request)
            .await
            .map_err(|e| e.to_string())?;
        let page = serde_json::to_value(answer).map_err(|e| e.to_string())?;
        if let Some(tools) = page.get("tools").and_then(Value::as_array) {
            raw.extend(tools.iter().cloned());
        }
        cursor = page.get("nextCursor").and_then(Value::as_str).map(str::to_string);
        if cursor.is_none() {
            break;
        }
    }
    Ok(tools_from(name, config, &raw))
}
