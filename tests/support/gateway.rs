//! `switchboard run` as a person sees it through local channels: send
//! messages and button presses over the local HTTP API on the gateway's
//! UNIX socket (`data/switchboard.sock` in the sandbox), read what the bot
//! posted.

use super::{Sandbox, binary};
use serde_json::{Value, json};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A free loopback port (bound, then released for the gateway).
pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub(crate) struct Gateway {
    child: Option<Child>,
    log: std::path::PathBuf,
    base: String,
    http: reqwest::Client,
}

impl Gateway {
    /// Start `switchboard run` in `sandbox`, whose config listens on `port`
    /// and has local channel `probe_alias`; wait until it answers.
    pub(crate) async fn start(sandbox: &Sandbox, port: u16, probe_alias: &str) -> Self {
        Self::start_with_env(sandbox, port, probe_alias, &[]).await
    }

    /// The same, with `env` added to the process's environment.
    pub(crate) async fn start_with_env(sandbox: &Sandbox, port: u16, probe_alias: &str, env: &[(&str, &str)]) -> Self {
        Self::start_from(&binary(), sandbox, port, probe_alias, env).await
    }

    /// The same, from the `switchboard` binary at `program` (another
    /// build: the upgrade tests).
    pub(crate) async fn start_from(
        program: &std::path::Path,
        sandbox: &Sandbox,
        port: u16,
        probe_alias: &str,
        env: &[(&str, &str)],
    ) -> Self {
        let log_path = sandbox.path().join(format!(
            "gateway-{}.log",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        let log = std::fs::File::create(&log_path).unwrap();
        let child = Command::new(program)
            .arg("run")
            .arg("--config")
            .arg(sandbox.config_path())
            .current_dir(sandbox.path())
            .env("SWITCHBOARD_LOG", "info")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("spawn switchboard run");
        let gw = Self {
            child: Some(child),
            log: log_path.clone(),
            base: "http://localhost".into(),
            http: reqwest::Client::builder()
                .unix_socket(sandbox.path().join("data/switchboard.sock"))
                .build()
                .unwrap(),
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let url = format!("{}/local/{probe_alias}/events?after=0&wait_ms=0", gw.base);
            if let Ok(r) = gw.http.get(&url).send().await
                && r.status().is_success()
            {
                return gw;
            }
            if Instant::now() > deadline {
                let log = std::fs::read_to_string(&log_path).unwrap_or_default();
                panic!("switchboard run did not come up on its socket (port {port}); log:\n{log}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// A person writes into a chat.
    pub(crate) async fn send(&self, alias: &str, chat: &str, user: &str, text: &str, mentioned: bool, direct: bool) {
        self.post(
            alias,
            "send",
            json!({"chat": chat, "user": user, "text": text, "mentioned": mentioned, "direct": direct}),
        )
        .await;
    }

    /// A person writes into a thread of a group chat, mentioning the bot.
    pub(crate) async fn send_in_thread(&self, alias: &str, chat: &str, thread: &str, user: &str, text: &str) {
        self.post(
            alias,
            "send",
            json!({"chat": chat, "thread": thread, "user": user, "text": text, "mentioned": true}),
        )
        .await;
    }

    /// POST `body` to `/local/<alias>/<action>`, which must succeed.
    async fn post(&self, alias: &str, action: &str, body: Value) {
        let r = self
            .http
            .post(format!("{}/local/{alias}/{action}", self.base))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert!(
            r.status().is_success(),
            "{action} failed: {}",
            r.text().await.unwrap_or_default()
        );
    }

    /// POST `body` to `path` (`/local/<alias>/send`) with extra `headers`,
    /// whatever the answer: its status and text.
    pub(crate) async fn post_raw(&self, path: &str, headers: &[(&str, &str)], body: Value) -> (u16, String) {
        let mut req = self.http.post(format!("{}{path}", self.base)).json(&body);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let r = req.send().await.unwrap();
        (r.status().as_u16(), r.text().await.unwrap_or_default())
    }

    /// GET `path`, whatever the answer: its status and text.
    pub(crate) async fn get_raw(&self, path: &str) -> (u16, String) {
        let r = self.http.get(format!("{}{path}", self.base)).send().await.unwrap();
        (r.status().as_u16(), r.text().await.unwrap_or_default())
    }

    /// A person presses an approval button.
    pub(crate) async fn press(&self, alias: &str, chat: &str, user: &str, approval_id: &str, choice: &str) {
        let body = json!({"chat": chat, "user": user, "approval_id": approval_id, "choice": choice});
        self.post(alias, "press", body).await;
    }

    /// Simulate the platform being down (or back).
    pub(crate) async fn outage(&self, alias: &str, down: bool) {
        let r = self
            .http
            .post(format!("{}/local/{alias}/outage", self.base))
            .json(&json!({"down": down}))
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success());
    }

    /// Every event on `alias` after sequence `after` (no waiting).
    /// Events after `after` as the person whose bearer `token` it is
    /// (aliases whose people have tokens).
    pub(crate) async fn events_as(&self, alias: &str, token: &str, after: u64) -> Vec<Value> {
        let url = format!("{}/local/{alias}/events?after={after}&wait_ms=200", self.base);
        let r = self.http.get(url).bearer_auth(token).send().await.unwrap();
        assert!(r.status().is_success(), "events as a person: {}", r.status());
        let v: Value = r.json().await.unwrap();
        v["events"].as_array().cloned().unwrap_or_default()
    }

    pub(crate) async fn events(&self, alias: &str, after: u64) -> Vec<Value> {
        let url = format!("{}/local/{alias}/events?after={after}&wait_ms=0", self.base);
        let v: Value = self.http.get(url).send().await.unwrap().json().await.unwrap();
        v["events"].as_array().cloned().unwrap_or_default()
    }

    /// Send `text` as `user` in the direct chat `chat` of `alias` and wait
    /// up to `secs` for the answer's text.
    pub(crate) async fn ask(&self, alias: &str, chat: &str, user: &str, text: &str, secs: u64) -> String {
        let mut cursor = self
            .events(alias, 0)
            .await
            .last()
            .and_then(|e| e["seq"].as_u64())
            .unwrap_or(0);
        self.send(alias, chat, user, text, false, true).await;
        let e = self
            .wait_for(alias, &mut cursor, secs, |e: &Value| e["chat"] == chat)
            .await;
        e["text"].as_str().unwrap_or("").to_string()
    }

    /// Wait for the first event after `*cursor` matching `pred`; advances the cursor past it.
    pub(crate) async fn wait_for(
        &self,
        alias: &str,
        cursor: &mut u64,
        secs: u64,
        pred: impl Fn(&Value) -> bool,
    ) -> Value {
        let deadline = Instant::now() + Duration::from_secs(secs);
        let mut seen = Vec::new();
        loop {
            let url = format!("{}/local/{alias}/events?after={}&wait_ms=500", self.base, *cursor);
            let v: Value = self.http.get(url).send().await.unwrap().json().await.unwrap();
            for e in v["events"].as_array().cloned().unwrap_or_default() {
                *cursor = e["seq"].as_u64().unwrap();
                if pred(&e) {
                    return e;
                }
                seen.push(e);
            }
            if Instant::now() > deadline {
                let log = std::fs::read_to_string(&self.log).unwrap_or_default();
                panic!("no matching event on {alias} within {secs}s; saw {seen:#?}\ngateway log:\n{log}");
            }
        }
    }

    /// What the gateway logged so far.
    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The process id, while it runs.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Send `signal` (`STOP`, `CONT`, ...) to the process.
    pub(crate) fn signal(&self, signal: &str) {
        if let Some(c) = &self.child {
            let status = Command::new("kill")
                .arg(format!("-{signal}"))
                .arg(c.id().to_string())
                .status()
                .expect("kill runs");
            assert!(status.success(), "kill -{signal} failed");
        }
    }

    /// Stop the process as a service manager does (SIGTERM) and wait
    /// until it has exited (it is left for `Drop` to reap).
    pub(crate) async fn terminate(&self) {
        let Some(pid) = self.pid() else { return };
        self.signal("TERM");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            // Gone, or a zombie (exited, not reaped yet).
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            if stat
                .rsplit_once(')')
                .is_none_or(|(_, rest)| rest.trim_start().starts_with('Z'))
            {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "switchboard did not stop within 30 s of SIGTERM"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Kill the process at once (no clean shutdown), as a crash would.
    pub(crate) fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        self.kill();
        // A failing test shows what the gateway said (its log lives in a
        // sandbox that is removed with the test).
        if std::thread::panicking() {
            let log = self.log();
            // The last 20 kB, from a line's start (a newline is one byte,
            // so the cut is a char boundary).
            let from = match log.len().saturating_sub(20_000) {
                0 => 0,
                cut => log.as_bytes()[cut..]
                    .iter()
                    .position(|b| *b == b'\n')
                    .map_or(cut, |at| cut + at + 1),
            };
            let tail = log.get(from..).unwrap_or_default();
            eprintln!("--- gateway log ({}), last part ---\n{tail}", self.log.display());
        }
    }
}
