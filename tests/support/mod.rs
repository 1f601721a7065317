//! Helpers for end-to-end tests: the built `switchboard` binary, a private
//! folder and configuration for it, and talking to `switchboard chat`
//! through its stdin and stdout the way a person at a terminal would.
//! Each test file includes this module and uses a part of it (hence the
//! allowances for what one file leaves unused).
#![allow(dead_code, unused_imports)]

pub(crate) mod e2ee;
mod gateway;
pub(crate) mod mcp;

pub(crate) use gateway::{Gateway, free_port};

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use switchboard_test_support::ScriptedModel;

/// The `switchboard` binary: cargo builds it for these tests and says
/// where it is, so it is never older than the sources.
pub(crate) fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_switchboard"))
}

/// A private working folder holding `switchboard.toml`, `data/` and `workspace/`.
pub(crate) struct Sandbox {
    pub dir: tempfile::TempDir,
}

impl Sandbox {
    pub(crate) fn new(config: &str) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("switchboard.toml"), config).expect("write config");
        Self { dir }
    }

    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    pub(crate) fn config_path(&self) -> PathBuf {
        self.path().join("switchboard.toml")
    }

    /// Run a command to completion; returns (exit code, stdout, stderr).
    pub(crate) fn run(&self, args: &[&str]) -> (i32, String, String) {
        let out = Command::new(binary())
            .args(args)
            .current_dir(self.path())
            .env("USER", "tester")
            .output()
            .expect("run switchboard");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// Start `switchboard chat` in this sandbox.
    pub(crate) fn chat(&self, extra: &[&str]) -> Chat {
        let mut cmd = Command::new(binary());
        cmd.arg("chat")
            .arg("--config")
            .arg(self.config_path())
            .args(extra)
            .current_dir(self.path())
            .env("USER", "tester")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn switchboard chat");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                match line {
                    Ok(l) => {
                        if tx.send(l).is_err() {
                            break;
                        }
                    }
                    Err(_) => break,
                }
            }
        });
        Chat {
            child,
            stdin,
            lines: rx,
            seen: Vec::new(),
        }
    }
}

/// A running `switchboard chat` process.
pub(crate) struct Chat {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    /// Every stdout line read so far.
    pub seen: Vec<String>,
}

impl Chat {
    pub(crate) fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin still open");
        writeln!(stdin, "{line}").expect("write to chat");
        stdin.flush().expect("flush");
    }

    /// Read stdout until a line contains `needle`; panics after `secs`.
    pub(crate) fn expect(&mut self, needle: &str, secs: u64) -> String {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if line.contains(needle) {
                        return line;
                    }
                }
                Err(_) => panic!(
                    "no line containing {needle:?} within {secs}s; saw:\n{}",
                    self.seen.join("\n")
                ),
            }
        }
    }

    /// Like [`Chat::expect`], but a line already read (by an earlier
    /// `expect` that skipped it) counts too: for output whose order against
    /// other output is not fixed, such as announcements.
    pub(crate) fn expect_anywhere(&mut self, needle: &str, secs: u64) -> String {
        if let Some(line) = self.seen.iter().find(|l| l.contains(needle)) {
            return line.clone();
        }
        self.expect(needle, secs)
    }

    /// Close stdin and wait for the process; returns its exit code and the
    /// rest of stdout.
    pub(crate) fn finish(mut self) -> (i32, Vec<String>) {
        drop(self.stdin.take());
        let status = self.child.wait().expect("wait");
        let rest: Vec<String> = self.lines.iter().collect();
        self.seen.extend(rest.iter().cloned());
        (status.code().unwrap_or(-1), rest)
    }
}

impl Drop for Chat {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A scripted model and `switchboard run` with agent `main` answering in
/// `local.team` (anyone may speak): `before` goes ahead of the team's
/// table, `team` into it.
pub(crate) async fn team_gateway(before: &str, team: &str) -> (ScriptedModel, Sandbox, Gateway) {
    let model = ScriptedModel::start().await;
    let port = free_port();
    let config = format!(
        "{}{before}[channels.local.team]\nallowed_users = [\"*\"]\n{team}",
        main_agent_on(&model.url(), port, "local.team")
    );
    let sandbox = Sandbox::new(&config);
    let gw = Gateway::start(&sandbox, port, "team").await;
    (model, sandbox, gw)
}

/// Agent `main` on the model at `model` answering on the Telegram stand-in
/// at `tg` (anyone may write; answers arrive whole), and the local probe
/// channel on `port`.
pub(crate) fn telegram_dm_config(model: &str, tg: &str, port: u16) -> String {
    format!(
        "{}[channels.telegram.main]\nbot_token = \"123:TEST\"\napi_url = \"{tg}\"\nallowed_users = [\"*\"]\nstreaming = \"off\"\n[channels.local.probe]\nallowed_users = []\n",
        main_agent_on(model, port, "telegram.main")
    )
}

/// `config` with the local TCP listener opted in on `port` (for the
/// console and health over TCP), added to its `[web]` table.
pub(crate) fn with_listen(config: &str, port: u16) -> String {
    config.replacen("[web]\n", &format!("[web]\nlisten = \"127.0.0.1:{port}\"\n"), 1)
}

/// A minimal provider section pointing at a scripted model.
pub(crate) fn provider(name: &str, url: &str, extra: &str) -> String {
    format!(
        "[providers.{name}]\nkind = \"openai\"\nbase_url = \"{url}\"\nmodel = \"{name}-model\"\nmax_retries = 0\n{extra}\n"
    )
}

/// The start of a gateway config: the model provider `p` at `model`, an
/// empty `[web]` table (the local API on its default UNIX socket; tests
/// that want TCP add `listen = "127.0.0.1:<port>"` with [`with_listen`]),
/// and agent `main` answering on `channel`.
pub(crate) fn main_agent_on(model: &str, _port: u16, channel: &str) -> String {
    format!(
        "{}[web]\n[agents.main]\nmodel_provider = \"p\"\nchannels = [\"{channel}\"]\n",
        provider("p", model, "")
    )
}

/// A gateway config with one agent answering on `matrix.main` (the bot
/// `@bot:localhost`, password `bot-password`) at `homeserver`, joining
/// `rooms`, the local probe channel on `port`; `extra` goes into the
/// Matrix table.
pub(crate) fn matrix_config(model: &str, homeserver: &str, rooms: &[&str], port: u16, extra: &str) -> String {
    let rooms = rooms.iter().map(|r| format!("\"{r}\"")).collect::<Vec<_>>().join(", ");
    format!(
        r#"{}[channels.matrix.main]
homeserver = "{homeserver}"
user_id = "@bot:localhost"
password = "bot-password"
auto_join = [{rooms}]
allowed_users = ["*"]
{extra}
[channels.local.probe]
allowed_users = []
"#,
        main_agent_on(model, port, "matrix.main")
    )
}

/// The default risk profile: supervised, `memory_recall` allowed, and
/// approvals routed to the room named `ops` on `channel`, decided by
/// `approver`.
pub(crate) fn ops_room_approvals(channel: &str, approver: &str) -> String {
    format!(
        r#"[risk_profiles.default]
level = "supervised"
auto_approve = ["memory_recall"]
[risk_profiles.default.approval_route]
approver_channel = "{channel}"
approver_recipient = "ops"
approvers = ["{approver}"]
timeout_secs = 60
"#
    )
}

/// `config` (with `ops_room_approvals`) plus an agent `reviewer` on the
/// model at `reviewer_url` that `main` may delegate to without asking.
pub(crate) fn with_reviewer(config: &str, reviewer_url: &str) -> String {
    config
        .replace(
            "[agents.main]",
            &format!(
                "{}[agents.reviewer]\nmodel_provider = \"prev\"\n[agents.main]",
                provider("prev", reviewer_url, "")
            ),
        )
        .replace(
            "auto_approve = [\"memory_recall\"]",
            "auto_approve = [\"memory_recall\", \"delegate\"]\ndelegation_policy = { mode = \"allow\" }",
        )
}

/// A fresh database named after `name` on the PostgreSQL test server
/// (`SWITCHBOARD_TEST_POSTGRES_URL`, set by `scripts/test.sh`), made with
/// psql; `None` when no server is configured.
pub(crate) fn fresh_database(name: &str) -> Option<String> {
    let admin = std::env::var("SWITCHBOARD_TEST_POSTGRES_URL").ok()?;
    let name = format!("sb_e2e_{name}_{}", std::process::id());
    let out = std::process::Command::new("psql")
        .arg(&admin)
        .args([
            "-v",
            "ON_ERROR_STOP=1",
            "-c",
            &format!("DROP DATABASE IF EXISTS {name}"),
            "-c",
            &format!("CREATE DATABASE {name}"),
        ])
        .output()
        .expect("psql runs");
    assert!(
        out.status.success(),
        "psql failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (base, _) = admin.rsplit_once('/').unwrap();
    Some(format!("{base}/{name}"))
}

/// A team chat (`local.team`, anyone may speak) where `main` (on the
/// model at `main`) may delegate to `reviewer` (on the model at
/// `reviewer`) with a `full` default risk profile; `route` is appended to
/// that profile (an `approval_route` table, or nothing).
pub(crate) fn team_with_reviewer(main: &str, reviewer: &str, _port: u16, route: &str) -> String {
    format!(
        r#"{}{}
[web]
[agents.main]
model_provider = "pmain"
channels = ["local.team"]
[agents.reviewer]
model_provider = "prev"
[risk_profiles.default]
level = "full"
delegation_policy = {{ mode = "allow" }}
{route}
[channels.local.team]
allowed_users = ["*"]
"#,
        provider("pmain", main, ""),
        provider("prev", reviewer, "")
    )
}

/// Open a console sign-in `link` over plain HTTP (its form, as a browser
/// posts it): the session cookie.
pub(crate) async fn session_from_link(base: &str, link: &str) -> String {
    let token = link.rsplit('#').next().unwrap().to_string();
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let r = http
        .post(format!("{base}/console/signin"))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(format!("token={token}"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 303);
    let cookie = r.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    cookie.split(';').next().unwrap().to_string()
}
