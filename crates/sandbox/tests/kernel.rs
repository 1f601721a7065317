//! The kernel layer on its own: programs started through the sandbox with
//! no argument checks at all (any program, any flag). Each escape is first
//! run unconfined, to show it is real, then confined, where it must fail.

use std::path::{Path, PathBuf};
mod common;

use common::run_as;
use switchboard_sandbox::{Limits, Network};

struct Place {
    ws: tempfile::TempDir,
    out: tempfile::TempDir,
}

impl Place {
    fn new() -> Self {
        let place = Self {
            ws: tempfile::tempdir().unwrap(),
            out: tempfile::tempdir().unwrap(),
        };
        std::fs::write(place.outside("secret.txt"), "the-outside-secret\n").unwrap();
        place
    }
    fn ws(&self) -> &Path {
        self.ws.path()
    }
    fn outside(&self, name: &str) -> PathBuf {
        self.out.path().join(name)
    }
    fn write(&self, rel: &str, text: &str) {
        let p = self.ws().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

async fn confined(ws: &Path, argv: &[&str]) -> (bool, String) {
    run_as(ws, Some((Network::None, Limits::default())), argv).await
}

async fn unconfined(ws: &Path, argv: &[&str]) -> (bool, String) {
    run_as(ws, None, argv).await
}

fn git_init_separate(p: &Place, marker: &Path) {
    std::fs::create_dir_all(p.ws().join("wt")).unwrap();
    p.write("wt/a.txt", "one\n");
    p.write("wt/b.txt", "two\n");
    let _ = std::fs::remove_dir_all(p.ws().join("gd"));
    let _ = std::fs::remove_file(p.ws().join("wt/.git"));
    let status = std::process::Command::new("git")
        .args(["init", "-q", "--separate-git-dir=gd", "wt"])
        .current_dir(p.ws())
        .status()
        .unwrap();
    assert!(status.success());
    p.write(
        "gd/config",
        &format!(
            "[core]\n\trepositoryformatversion = 0\n\tbare = false\n[diff]\n\texternal = \"touch {} #\"\n",
            marker.display()
        ),
    );
}

#[tokio::test]
async fn a_repository_config_in_a_separate_git_dir_cannot_start_a_program_outside() {
    let p = Place::new();
    let marker = p.outside("x");
    git_init_separate(&p, &marker);
    unconfined(p.ws(), &["git", "-C", "wt", "diff", "--no-index", "a.txt", "b.txt"]).await;
    assert!(marker.exists(), "the escape is real when unconfined");
    std::fs::remove_file(&marker).unwrap();
    let (_, out) = confined(p.ws(), &["git", "-C", "wt", "diff", "--no-index", "a.txt", "b.txt"]).await;
    assert!(!marker.exists(), "the external diff wrote outside: {out}");
}

#[tokio::test]
async fn a_hand_written_bare_repository_cannot_start_a_program_outside() {
    let p = Place::new();
    let marker = p.outside("bare");
    p.write("r/HEAD", "ref: refs/heads/main\n");
    std::fs::create_dir_all(p.ws().join("r/objects")).unwrap();
    std::fs::create_dir_all(p.ws().join("r/refs")).unwrap();
    p.write(
        "r/config",
        &format!(
            "[core]\n\trepositoryformatversion = 0\n\tbare = true\n[diff]\n\texternal = \"touch {} #\"\n",
            marker.display()
        ),
    );
    p.write("r/a", "one\n");
    p.write("r/b", "two\n");
    unconfined(p.ws(), &["git", "-C", "r", "diff", "--no-index", "a", "b"]).await;
    assert!(marker.exists(), "the escape is real when unconfined");
    std::fs::remove_file(&marker).unwrap();
    let (_, out) = confined(p.ws(), &["git", "-C", "r", "diff", "--no-index", "a", "b"]).await;
    assert!(!marker.exists(), "{out}");
}

#[tokio::test]
async fn git_apply_with_unsafe_paths_cannot_write_outside() {
    let p = Place::new();
    let target = p.outside("planted.txt");
    let diff = format!(
        "--- /dev/null\n+++ {t}\n@@ -0,0 +1 @@\n+planted\n",
        t = target.display()
    );
    p.write("p.diff", &diff);
    unconfined(p.ws(), &["git", "apply", "--unsafe-paths", "-p0", "p.diff"]).await;
    assert!(target.exists(), "the escape is real when unconfined");
    std::fs::remove_file(&target).unwrap();
    let (ok, out) = confined(p.ws(), &["git", "apply", "--unsafe-paths", "-p0", "p.diff"]).await;
    assert!(!target.exists(), "{out}");
    assert!(!ok, "git reports the refused write: {out}");
}

#[tokio::test]
async fn a_link_made_by_git_apply_leads_nowhere() {
    let p = Place::new();
    let link_diff = format!(
        "diff --git a/s/up b/s/up\nnew file mode 120000\n--- /dev/null\n+++ b/s/up\n@@ -0,0 +1 @@\n+{}\n\\ No newline at end of file\n",
        p.out.path().display()
    );
    p.write("l.diff", &link_diff);
    p.write("s/empty", "");
    let (ok, out) = confined(p.ws(), &["git", "apply", "l.diff"]).await;
    assert!(ok, "making a link inside the workspace is allowed: {out}");
    assert!(p.ws().join("s/up").is_symlink());
    // Reading through the link: the unconfined control sees the secret.
    let read = ["git", "-C", "s", "diff", "--no-index", "up/secret.txt", "empty"];
    assert!(unconfined(p.ws(), &read).await.1.contains("the-outside-secret"));
    let (_, out) = confined(p.ws(), &read).await;
    assert!(!out.contains("the-outside-secret"), "{out}");
    let (_, out) = confined(p.ws(), &["grep", "-R", "outside-secret", "s"]).await;
    assert!(!out.contains("the-outside-secret"), "{out}");
    let (_, out) = confined(p.ws(), &["cat", "s/up/secret.txt"]).await;
    assert!(!out.contains("the-outside-secret"), "{out}");
    // Writing through it.
    let write = [
        "git",
        "-C",
        "s",
        "diff",
        "--no-index",
        "--output=up/x",
        "empty",
        "../l.diff",
    ];
    let (_, out) = confined(p.ws(), &write).await;
    assert!(!p.outside("x").exists(), "{out}");
    unconfined(p.ws(), &write).await;
    assert!(p.outside("x").exists(), "the write is real when unconfined");
}

#[tokio::test]
async fn programs_that_start_programs_stay_inside() {
    let p = Place::new();
    p.write("a.txt", "one\n");
    std::os::unix::fs::symlink(p.out.path(), p.ws().join("link")).unwrap();
    let (_, out) = confined(p.ws(), &["find", "-L", ".", "-name", "secret.txt"]).await;
    assert!(!out.contains("link/secret.txt"), "find -L listed outside: {out}");
    let sed_marker = p.outside("sed");
    let sed_script = format!("1e touch {}", sed_marker.display());
    confined(p.ws(), &["sed", &sed_script, "a.txt"]).await;
    assert!(!sed_marker.exists());
    let awk_marker = p.outside("awk");
    let awk_script = format!("BEGIN {{ system(\"touch {}\") }}", awk_marker.display());
    confined(p.ws(), &["awk", &awk_script]).await;
    assert!(!awk_marker.exists());
    assert!(confined(p.ws(), &["tar", "-cf", "a.tar", "a.txt"]).await.0);
    let tar_marker = p.outside("tar");
    let to_command = format!("--to-command=touch {}", tar_marker.display());
    confined(p.ws(), &["tar", &to_command, "-xf", "a.tar"]).await;
    assert!(!tar_marker.exists());
    // The unconfined control: awk's system() does reach outside.
    unconfined(p.ws(), &["awk", &awk_script]).await;
    assert!(awk_marker.exists());
    // And a program may still work in its workspace.
    let (ok, out) = confined(p.ws(), &["sh", "-c", "echo made > inside.txt && cat inside.txt"]).await;
    assert!(ok && out.contains("made"), "{out}");
}

#[tokio::test]
async fn system_folders_are_read_only_and_secrets_out_of_reach() {
    let p = Place::new();
    let (ok, out) = confined(p.ws(), &["cat", "/etc/passwd"]).await;
    assert!(ok && out.contains("root:"), "programs read the user list: {out}");
    let (ok, _) = confined(p.ws(), &["touch", "/usr/local/planted"]).await;
    assert!(!ok && !Path::new("/usr/local/planted").exists());
    let (ok, _) = confined(p.ws(), &["cat", "/etc/shadow"]).await;
    assert!(!ok, "/etc/shadow is not among the /etc files programs read");
    // Another process's environment (here: this test's, with a marker).
    // SAFETY: set before any command reads it; only this test sets it.
    unsafe { std::env::set_var("SANDBOX_TEST_SECRET", "env-secret-value") };
    let environ = format!("/proc/{}/environ", std::process::id());
    let (_, out) = confined(p.ws(), &["cat", &environ]).await;
    assert!(!out.contains("env-secret-value"), "{out}");
    // Its own /proc entry is readable.
    let (ok, out) = confined(p.ws(), &["cat", "/proc/self/status"]).await;
    assert!(ok && out.contains("NoNewPrivs:\t1"), "{out}");
    // It cannot signal processes outside (the test itself).
    let pid = std::process::id().to_string();
    let (ok, _) = confined(p.ws(), &["kill", "-0", &pid]).await;
    assert!(!ok, "a confined program signalled the gateway");
}

const SOCKETS: &str = r#"
import socket, sys
s = socket.socket()
s.bind(('127.0.0.1', 0)); s.listen()
c = socket.create_connection(s.getsockname(), timeout=2)
print('own-loopback-ok')
try:
    socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=2); print('host-reached')
except OSError as e:
    print('host-refused', e)
"#;

#[tokio::test]
async fn the_network_is_what_the_profile_allows() {
    let p = Place::new();
    let host = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = host.local_addr().unwrap().port().to_string();
    let argv = ["python3", "-c", SOCKETS, &port];
    let (ok, out) = run_as(p.ws(), Some((Network::None, Limits::default())), &argv).await;
    assert!(!ok && !out.contains("own-loopback-ok"), "{out}");
    let (ok, out) = run_as(p.ws(), Some((Network::Loopback, Limits::default())), &argv).await;
    assert!(ok && out.contains("own-loopback-ok"), "{out}");
    assert!(
        out.contains("host-refused"),
        "the host's loopback stays out of reach: {out}"
    );
    let (ok, out) = run_as(p.ws(), Some((Network::Any, Limits::default())), &argv).await;
    assert!(ok && out.contains("host-reached"), "{out}");
}

const FORKS: &str = r#"
import os, time
n = 0
try:
    for _ in range(2000):
        if os.fork() == 0:
            os.close(1); os.close(2); time.sleep(30); os._exit(0)
        n += 1
except OSError as e:
    print('stopped', e)
print('forked', n, flush=True)
os._exit(0)
"#;

#[tokio::test]
async fn a_fork_bomb_is_bounded() {
    let p = Place::new();
    let limits = Limits {
        max_processes: 32,
        ..Limits::default()
    };
    let (_, out) = run_as(p.ws(), Some((Network::None, limits)), &["python3", "-c", FORKS]).await;
    let forked: u32 = out
        .lines()
        .find_map(|l| l.strip_prefix("forked "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("{out}"));
    assert!(forked < 32, "{forked} processes: {out}");
    assert!(out.contains("stopped"), "{out}");
    eprintln!("{out}");
}

#[tokio::test]
async fn the_limits_hold() {
    let p = Place::new();
    let limits = Limits {
        max_file_size: 4096,
        ..Limits::default()
    };
    let (ok, _) = run_as(
        p.ws(),
        Some((Network::None, limits)),
        &["dd", "if=/dev/zero", "of=big", "bs=1024", "count=64"],
    )
    .await;
    assert!(!ok);
    assert!(std::fs::metadata(p.ws().join("big")).unwrap().len() <= 4096);
}

#[tokio::test]
async fn file_work_is_confined_to_the_workspace() {
    use switchboard_sandbox::fs::{Access, confined};
    let p = Place::new();
    std::os::unix::fs::symlink(p.outside("secret.txt"), p.ws().join("link")).unwrap();
    let link = p.ws().join("link");
    let read = confined(p.ws(), Access::Read, move || std::fs::read_to_string(link)).await;
    assert!(read.is_err(), "{read:?}");
    let inside = p.ws().join("in.txt");
    let wrote = confined(p.ws(), Access::ReadWrite, move || std::fs::write(inside, "ok")).await;
    assert!(wrote.is_ok(), "{wrote:?}");
    let escape = p.outside("written");
    let target = escape.clone();
    let wrote = confined(p.ws(), Access::ReadWrite, move || std::fs::write(target, "no")).await;
    assert!(wrote.is_err() && !escape.exists());
    let ro = p.ws().join("ro.txt");
    let wrote = confined(p.ws(), Access::Read, move || std::fs::write(ro, "no")).await;
    assert!(wrote.is_err(), "read access does not write");
    // The calling thread is not confined.
    assert!(std::fs::read_to_string(p.outside("secret.txt")).is_ok());
}

const UNIX: &str = r#"
import socket, sys
for path in sys.argv[1:]:
    try:
        s = socket.socket(socket.AF_UNIX); s.connect(path); print('reached', path)
    except OSError as e:
        print('refused', path, e)
try:
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', 9)); print('udp-sent')
except OSError as e:
    print('udp-refused', e)
"#;

#[tokio::test]
async fn unix_sockets_are_closed_whatever_the_network() {
    let p = Place::new();
    let outside = p.outside("service.sock");
    let inside = p.ws().join("own.sock");
    let _a = std::os::unix::net::UnixListener::bind(&outside).unwrap();
    let _b = std::os::unix::net::UnixListener::bind(&inside).unwrap();
    let (o, i) = (outside.to_str().unwrap(), inside.to_str().unwrap());
    let (_, out) = unconfined(p.ws(), &["python3", "-c", UNIX, o, i]).await;
    assert!(
        out.contains(&format!("reached {o}")),
        "the socket is reachable unconfined: {out}"
    );
    for network in [Network::None, Network::Any] {
        let (_, out) = run_as(
            p.ws(),
            Some((network, Limits::default())),
            &["python3", "-c", UNIX, o, i],
        )
        .await;
        assert!(!out.contains("reached"), "{network:?}: {out}");
        assert!(out.contains(&format!("refused {o}")), "{out}");
        if network == Network::None {
            assert!(out.contains("udp-refused"), "{out}");
        }
    }
}

#[tokio::test]
async fn what_landlock_does_not_mediate_is_read_only_outside() {
    use std::os::unix::fs::PermissionsExt;
    let p = Place::new();
    let secret = p.outside("secret.txt");
    let before = std::fs::metadata(&secret).unwrap().permissions().mode();
    let s = secret.to_str().unwrap();
    let (ok, out) = confined(p.ws(), &["chmod", "0777", s]).await;
    assert!(!ok, "{out}");
    let (ok, out) = confined(p.ws(), &["touch", "-d", "2001-01-01", s]).await;
    assert!(!ok, "{out}");
    assert_eq!(std::fs::metadata(&secret).unwrap().permissions().mode(), before);
    // Inside the workspace these work.
    p.write("mine.txt", "x");
    assert!(confined(p.ws(), &["chmod", "0600", "mine.txt"]).await.0);
    // No device nodes, even in the workspace.
    let mknod = "import os, stat; os.mknod('zero', stat.S_IFCHR | 0o600, os.makedev(1, 5))";
    let (ok, out) = confined(p.ws(), &["python3", "-c", mknod]).await;
    assert!(!ok && !p.ws().join("zero").exists(), "{out}");
    // No capabilities left, even when the gateway runs as root.
    let (_, out) = confined(p.ws(), &["cat", "/proc/self/status"]).await;
    for line in out.lines().filter(|l| l.starts_with("Cap")) {
        assert!(line.ends_with("0000000000000000"), "{line}");
    }
}

#[tokio::test]
async fn what_a_command_leaves_running_ends_with_it() {
    let p = Place::new();
    let script = "setsid sh -c 'sleep 1; touch late' >/dev/null 2>&1 < /dev/null & echo started";
    let (ok, out) = confined(p.ws(), &["sh", "-c", script]).await;
    assert!(ok && out.contains("started"), "{out}");
    tokio::time::sleep(std::time::Duration::from_millis(1800)).await;
    let cgroup = switchboard_sandbox::Support::get()
        .layers()
        .into_iter()
        .find(|l| l.name == "process-limit")
        .unwrap();
    if cgroup.detail.contains("cgroup") {
        assert!(
            !p.ws().join("late").exists(),
            "a process that left the group outlived the command"
        );
    } else {
        // Without a cgroup the layer says so; the process group is all there is.
        assert!(!cgroup.detail.contains("pids cgroup per command"), "{cgroup:?}");
    }
}
