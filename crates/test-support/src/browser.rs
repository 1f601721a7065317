//! A headless Chromium driven over the DevTools protocol (a websocket of
//! JSON commands), for tests of the operator console in a real browser.
//!
//! `Browser::launch` starts Debian's `chromium` (or `SWITCHBOARD_TEST_CHROMIUM`)
//! with a fresh profile and no background networking, opens one page and
//! drives it: navigate, evaluate JavaScript, wait for a condition, take a
//! screenshot at a given viewport size.

use base64::Engine;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::net::TcpStream;
use tokio::sync::Mutex;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// One browser with one page.
pub struct Browser {
    child: Child,
    socket: Mutex<Socket>,
    next_id: AtomicU64,
    session: String,
    _profile: tempfile::TempDir,
}

/// The Chromium binary to use, if one is installed.
pub fn chromium() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("SWITCHBOARD_TEST_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists())
}

impl Browser {
    /// Start Chromium headless and open a blank page.
    pub async fn launch() -> Result<Self, String> {
        let binary =
            chromium().ok_or("no Chromium: install Debian's chromium package or set SWITCHBOARD_TEST_CHROMIUM")?;
        let profile = tempfile::tempdir().map_err(|e| e.to_string())?;
        let child = Command::new(&binary)
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-dev-shm-usage",
                "--remote-debugging-port=0",
                "--window-size=1280,800",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
        let url = devtools_url(profile.path()).await?;
        let (socket, _) = tokio_tungstenite::connect_async(url.as_str())
            .await
            .map_err(|e| format!("cannot reach Chromium's DevTools at {url}: {e}"))?;
        let mut browser = Self {
            child,
            socket: Mutex::new(socket),
            next_id: AtomicU64::new(1),
            session: String::new(),
            _profile: profile,
        };
        let target = browser
            .send(None, "Target.createTarget", json!({"url": "about:blank"}))
            .await?;
        let target_id = target["targetId"].as_str().ok_or("no targetId")?.to_string();
        let attached = browser
            .send(
                None,
                "Target.attachToTarget",
                json!({"targetId": target_id, "flatten": true}),
            )
            .await?;
        browser.session = attached["sessionId"].as_str().ok_or("no sessionId")?.to_string();
        browser.call("Page.enable", json!({})).await?;
        browser.call("Runtime.enable", json!({})).await?;
        browser.viewport(1280, 800).await?;
        Ok(browser)
    }

    async fn send(&self, session: Option<&str>, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        let mut socket = self.socket.lock().await;
        socket
            .send(Message::Text(msg.to_string()))
            .await
            .map_err(|e| format!("{method}: {e}"))?;
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let next = tokio::time::timeout(left, socket.next())
                .await
                .map_err(|_| format!("{method}: no answer from Chromium in 30 s"))?;
            let Some(Ok(Message::Text(text))) = next else {
                match next {
                    Some(Ok(_)) => continue,
                    other => return Err(format!("{method}: DevTools connection ended: {other:?}")),
                }
            };
            let v: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
            if v["id"].as_u64() != Some(id) {
                continue; // an event
            }
            if let Some(e) = v.get("error") {
                return Err(format!("{method}: {e}"));
            }
            return Ok(v["result"].clone());
        }
    }

    /// A DevTools command on the page.
    pub async fn call(&self, method: &str, params: Value) -> Result<Value, String> {
        let session = self.session.clone();
        self.send(Some(&session), method, params).await
    }

    /// Resize the page's viewport (a width under 600 emulates a phone).
    pub async fn viewport(&self, width: u32, height: u32) -> Result<(), String> {
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600}),
        )
        .await
        .map(|_| ())
    }

    /// Open `url` and wait until the document has loaded.
    pub async fn goto(&self, url: &str) -> Result<(), String> {
        let r = self.call("Page.navigate", json!({"url": url})).await?;
        if let Some(e) = r.get("errorText").and_then(Value::as_str) {
            return Err(format!("cannot open {url}: {e}"));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        self.wait_for(
            // The fragment is the page's own business (it may take it away).
            &format!(
                "location.href.split('#')[0] === {} && document.readyState === 'complete'",
                json!(url.split('#').next().unwrap_or(url))
            ),
            20,
        )
        .await
        .map(|_| ())
    }

    /// The value of JavaScript expression `expr` (promises are awaited).
    pub async fn eval(&self, expr: &str) -> Result<Value, String> {
        let r = self
            .call(
                "Runtime.evaluate",
                json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
            )
            .await?;
        if let Some(e) = r.get("exceptionDetails") {
            return Err(format!("`{expr}` threw: {e}"));
        }
        Ok(r["result"]["value"].clone())
    }

    /// Wait up to `secs` for `expr` to be truthy; its value.
    pub async fn wait_for(&self, expr: &str, secs: u64) -> Result<Value, String> {
        let deadline = Instant::now() + Duration::from_secs(secs);
        let mut last = Value::Null;
        while Instant::now() < deadline {
            match self.eval(expr).await {
                Ok(v) if truthy(&v) => return Ok(v),
                Ok(v) => last = v,
                // A navigation may destroy the context mid-evaluation.
                Err(e) => last = json!(e),
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Err(format!("`{expr}` still not true after {secs} s (last: {last})"))
    }

    /// Click the first element matching CSS `selector`.
    pub async fn click(&self, selector: &str) -> Result<(), String> {
        let found = self
            .eval(&format!(
                "(() => {{ const e = document.querySelector({}); if (!e) return false; e.click(); return true; }})()",
                json!(selector)
            ))
            .await?;
        if found == json!(true) {
            Ok(())
        } else {
            Err(format!("nothing matches {selector}"))
        }
    }

    /// Save a PNG of the page, laid out at `width`×`height`, to `path`.
    pub async fn screenshot(&self, path: &Path, width: u32, height: u32) -> Result<(), String> {
        self.viewport(width, height).await?;
        tokio::time::sleep(Duration::from_millis(150)).await;
        let shot = self.call("Page.captureScreenshot", json!({"format": "png"})).await?;
        let data = shot["data"].as_str().ok_or("no screenshot data")?;
        let png = base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|e| e.to_string())?;
        std::fs::write(path, png).map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        _ => true,
    }
}

/// The browser's DevTools websocket, from the file Chromium writes into
/// its profile once it listens.
async fn devtools_url(profile: &Path) -> Result<String, String> {
    let file = profile.join("DevToolsActivePort");
    for _ in 0..300 {
        if let Ok(text) = std::fs::read_to_string(&file) {
            let mut lines = text.lines();
            if let (Some(port), Some(path)) = (lines.next(), lines.next()) {
                return Ok(format!("ws://127.0.0.1:{port}{path}"));
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err("Chromium did not open its DevTools port in 30 s".into())
}
