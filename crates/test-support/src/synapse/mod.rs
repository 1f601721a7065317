//! A real Synapse homeserver on a loopback port, for the Matrix adapter's
//! tests and benchmark, and people who talk to it over the client-server
//! API. Synapse comes from PyPI (`./scripts/test.sh` installs it into
//! `~/.cache/switchboard-synapse`); `SWITCHBOARD_TEST_SYNAPSE_PYTHON` names
//! another interpreter that has it.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

mod person;
pub use person::{Person, WATCH_READY, body, thread_of};

/// The Python that has `matrix-synapse` installed, or what to do about it.
pub fn find_python() -> Result<PathBuf, String> {
    if let Ok(p) = std::env::var("SWITCHBOARD_TEST_SYNAPSE_PYTHON") {
        return Ok(PathBuf::from(p));
    }
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let p = PathBuf::from(home).join(".cache/switchboard-synapse/bin/python");
    if p.exists() {
        Ok(p)
    } else {
        Err(format!(
            "Synapse is not installed at {}: run ./scripts/test.sh (it installs matrix-synapse there) or set SWITCHBOARD_TEST_SYNAPSE_PYTHON",
            p.display()
        ))
    }
}

fn python() -> PathBuf {
    find_python().unwrap_or_else(|e| panic!("{e}"))
}

/// Rate limits for messages sent by one user.
#[derive(Debug, Clone, Copy)]
pub struct MessageRate {
    /// Messages per second once the burst is spent.
    pub per_second: f64,
    /// Messages allowed at once.
    pub burst: u32,
}

/// A running homeserver; stopped when dropped.
pub struct Synapse {
    child: Option<Child>,
    dir: tempfile::TempDir,
    /// Its loopback port.
    pub port: u16,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// What a test changes from Synapse's defaults.
#[derive(Debug, Clone, Copy, Default)]
pub struct Tuning {
    /// Messages per user, when limited.
    pub rate: Option<MessageRate>,
    /// `max_upload_size` (`"1M"`), instead of Synapse's 50M.
    pub max_upload: Option<&'static str>,
}

fn config(dir: &Path, port: u16, tuning: Tuning) -> String {
    let rate = tuning.rate;
    let d = dir.display();
    let generous = "{per_second: 10000, burst_count: 10000}";
    let message = match rate {
        Some(r) => format!("{{per_second: {}, burst_count: {}}}", r.per_second, r.burst),
        None => generous.to_string(),
    };
    let upload = tuning
        .max_upload
        .map(|m| format!("max_upload_size: \"{m}\"\n"))
        .unwrap_or_default();
    format!(
        r#"server_name: "localhost"
pid_file: "{d}/homeserver.pid"
listeners:
  - port: {port}
    bind_addresses: ["127.0.0.1"]
    type: http
    tls: false
    x_forwarded: false
    resources:
      - names: [client]
        compress: false
database:
  name: sqlite3
  args:
    database: "{d}/homeserver.db"
media_store_path: "{d}/media"
log_config: "{d}/log.yaml"
signing_key_path: "{d}/localhost.signing.key"
report_stats: false
macaroon_secret_key: "switchboard-test-macaroon"
form_secret: "switchboard-test-form"
registration_shared_secret: "switchboard-test-registration"
trusted_key_servers: []
suppress_key_server_warning: true
enable_registration: true
enable_registration_without_verification: true
presence:
  enabled: false
url_preview_enabled: false
rc_message: {message}
{upload}rc_registration: {generous}
rc_login:
  address: {generous}
  account: {generous}
  failed_attempts: {generous}
rc_joins:
  local: {generous}
  remote: {generous}
rc_invites:
  per_room: {generous}
  per_user: {generous}
  per_issuer: {generous}
rc_admin_redaction: {generous}
rc_room_creation: {generous}
"#
    )
}

/// Requests with their status codes (`synapse.access`) on stderr.
const LOG_CONFIG: &str = r#"version: 1
formatters:
  plain:
    format: "%(asctime)s %(name)s %(levelname)s %(message)s"
handlers:
  console:
    class: logging.StreamHandler
    formatter: plain
loggers:
  synapse.access:
    level: INFO
root:
  level: WARNING
  handlers: [console]
disable_existing_loggers: false
"#;

impl Synapse {
    /// A fresh homeserver with generous rate limits.
    pub async fn start() -> Self {
        Self::start_with(None).await
    }

    /// A fresh homeserver; `rate` limits messages per user when set.
    pub async fn start_with(rate: Option<MessageRate>) -> Self {
        Self::start_tuned(Tuning { rate, max_upload: None }).await
    }

    /// A fresh homeserver with `tuning` applied to its configuration.
    pub async fn start_tuned(tuning: Tuning) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        std::fs::write(dir.path().join("homeserver.yaml"), config(dir.path(), port, tuning)).unwrap();
        std::fs::write(dir.path().join("log.yaml"), LOG_CONFIG).unwrap();
        let status = Command::new(python())
            .args([
                "-m",
                "synapse.app.homeserver",
                "-c",
                "homeserver.yaml",
                "--generate-keys",
            ])
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("run Synapse to generate its signing key");
        assert!(status.success(), "Synapse could not generate its signing key");
        let mut s = Self { child: None, dir, port };
        s.resume().await;
        s
    }

    /// Its base URL.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Start (again) on the same port and database; wait until it answers.
    pub async fn resume(&mut self) {
        assert!(self.child.is_none(), "Synapse is already running");
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.path().join("synapse.log"))
            .unwrap();
        let child = Command::new(python())
            .args(["-m", "synapse.app.homeserver", "-c", "homeserver.yaml"])
            .current_dir(self.dir.path())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start Synapse");
        self.child = Some(child);
        let http = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(r) = http.get(format!("{}/_matrix/client/versions", self.url())).send().await
                && r.status().is_success()
            {
                return;
            }
            if let Some(c) = self.child.as_mut()
                && let Ok(Some(status)) = c.try_wait()
            {
                let log = std::fs::read_to_string(self.dir.path().join("synapse.log")).unwrap_or_default();
                panic!("Synapse exited ({status}) while starting:\n{log}");
            }
            assert!(Instant::now() < deadline, "Synapse did not answer within 60 s");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// What the homeserver logged so far (requests with their status codes).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("synapse.log")).unwrap_or_default()
    }

    /// Stop the homeserver (the database stays for `resume`).
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Register a user through the client-server API.
    pub async fn register(&self, localpart: &str, password: &str) -> Person {
        let http = reqwest::Client::new();
        let r: Value = http
            .post(format!("{}/_matrix/client/v3/register", self.url()))
            .json(&json!({
                "username": localpart, "password": password,
                "auth": { "type": "m.login.dummy" }, "inhibit_login": false
            }))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let token = r["access_token"]
            .as_str()
            .unwrap_or_else(|| panic!("registering {localpart} failed: {r}"));
        Person {
            user_id: r["user_id"].as_str().unwrap().to_string(),
            token: token.to_string(),
            base: self.url(),
            http,
            txn: AtomicU64::new(0),
        }
    }
}

impl Drop for Synapse {
    fn drop(&mut self) {
        self.stop();
    }
}
