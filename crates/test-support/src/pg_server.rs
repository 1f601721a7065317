//! A PostgreSQL server of a test's own, which the test may stop, start
//! again, and start on another port (a restart, an outage, a failover to
//! another address), from Debian's PostgreSQL binaries: those in
//! `SWITCHBOARD_TEST_PG_BIN` (scripts/test.sh sets it) or the first
//! `/usr/lib/postgresql/*/bin`. The shared test server other tests use is
//! left alone.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// A throwaway server: its data folder, binaries and current port.
pub struct PgServer {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: Mutex<Option<u16>>,
}

impl PgServer {
    /// Initialise a data folder and start a server on a free loopback
    /// port; `None` when no PostgreSQL binaries are installed.
    pub fn start() -> Option<PgServer> {
        let bin = binaries()?;
        let dir = tempfile::Builder::new()
            .prefix("switchboard-own-pg")
            .tempdir()
            .expect("temp dir");
        if is_root() {
            run(Command::new("chown").arg("postgres").arg(dir.path()));
        }
        let server = PgServer {
            dir,
            bin,
            port: Mutex::new(None),
        };
        server.as_owner(|c| {
            c.arg(server.bin.join("initdb"))
                .arg("-D")
                .arg(server.data())
                .args(["-A", "trust", "-U", "postgres"])
        });
        server.start_on(free_port());
        Some(server)
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// The port it listens on (the last it was started on).
    pub fn port(&self) -> u16 {
        self.port.lock().unwrap().expect("started once")
    }

    /// Start the server (again) on `port`.
    pub fn start_on(&self, port: u16) {
        let options = format!(
            "-c listen_addresses=127.0.0.1 -p {port} -k {} -c max_connections=200",
            self.dir.path().display()
        );
        self.as_owner(|c| {
            c.arg(self.bin.join("pg_ctl"))
                .arg("-D")
                .arg(self.data())
                .arg("-l")
                .arg(self.dir.path().join("log"))
                .args(["-w", "-o", &options, "start"])
        });
        *self.port.lock().unwrap() = Some(port);
    }

    /// Stop the server as an operator's restart does (`-m fast`: clients
    /// are disconnected, nothing committed is lost).
    pub fn stop(&self) {
        self.as_owner(|c| {
            c.arg(self.bin.join("pg_ctl"))
                .arg("-D")
                .arg(self.data())
                .args(["-m", "fast", "-w", "stop"])
        });
    }

    /// Create database `name` on it; its URL.
    pub fn database(&self, name: &str) -> String {
        let admin = format!("postgres://postgres@127.0.0.1:{}/postgres", self.port());
        run(Command::new("psql")
            .arg(&admin)
            .args(["-v", "ON_ERROR_STOP=1", "-c", &format!("CREATE DATABASE {name}")]));
        format!("postgres://postgres@127.0.0.1:{}/{name}", self.port())
    }

    fn as_owner(&self, build: impl FnOnce(&mut Command) -> &mut Command) {
        run(build(&mut owner_command()));
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        if self.data().join("postmaster.pid").exists() {
            let _ = owner_command()
                .arg(self.bin.join("pg_ctl"))
                .arg("-D")
                .arg(self.data())
                .args(["-m", "immediate", "stop"])
                .output();
        }
    }
}

/// A command run as the data folder's owner (`postgres` when the tests
/// run as root: initdb refuses root).
fn owner_command() -> Command {
    if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]);
        c
    } else {
        Command::new("env")
    }
}

fn binaries() -> Option<PathBuf> {
    if let Ok(bin) = std::env::var("SWITCHBOARD_TEST_PG_BIN") {
        return Some(PathBuf::from(bin));
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|b| Path::new(b).join("initdb").exists())
        .collect();
    found.sort();
    found.pop()
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}

fn run(cmd: &mut Command) {
    let out = cmd.output().expect("command runs");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A free loopback port.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
