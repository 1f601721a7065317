//! The kernel layer against other processes: the gateway, unrelated
//! processes of the same user, System V IPC, and native code from the
//! workspace. Each attack runs unconfined first (to show it is real), then
//! confined, where it must fail. The test process stands for the gateway.

mod common;

use std::path::Path;
use switchboard_sandbox::{Limits, Network};

/// Run `argv` in `ws`, confined (with `network`) or not: success and all output.
async fn run(ws: &Path, network: Option<Network>, argv: &[&str]) -> (bool, String) {
    common::run_as(ws, network.map(|n| (n, Limits::default())), argv).await
}

/// The soft open-files limit of process `pid`.
fn open_files_limit(pid: u32) -> String {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let line = limits.lines().find(|l| l.starts_with("Max open files")).unwrap();
    line.split_whitespace().nth(3).unwrap().to_string()
}

/// Re-limit, renice and pin process `pid`, each step reporting.
const RELIMIT: &str = r#"
import os, resource, sys
pid = int(sys.argv[1])
for name, step in [
    ("prlimit", lambda: resource.prlimit(pid, resource.RLIMIT_NOFILE, (777, 777))),
    ("renice", lambda: os.setpriority(os.PRIO_PROCESS, pid, 19)),
    ("affinity", lambda: os.sched_setaffinity(pid, {0})),
]:
    try:
        step()
        print(name, "done")
    except OSError as e:
        print(name, "refused", e.errno)
"#;

#[tokio::test]
async fn a_command_cannot_relimit_renice_or_pin_the_gateway_or_another_process() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("relimit.py"), RELIMIT).unwrap();
    // Real: unconfined, it re-limits an unrelated process of the same user.
    let mut victim = std::process::Command::new("sleep").arg("60").spawn().unwrap();
    let pid = victim.id().to_string();
    let (_, out) = run(ws.path(), None, &["python3", "relimit.py", &pid]).await;
    assert!(out.contains("prlimit done") && out.contains("renice done"), "{out}");
    assert_eq!(open_files_limit(victim.id()), "777");
    victim.kill().unwrap();
    victim.wait().unwrap();

    let mut victim = std::process::Command::new("sleep").arg("60").spawn().unwrap();
    let before = open_files_limit(victim.id());
    let gateway = std::process::id();
    let gateway_before = open_files_limit(gateway);
    for target in [victim.id(), gateway] {
        let (_, out) = run(
            ws.path(),
            Some(Network::Any),
            &["python3", "relimit.py", &target.to_string()],
        )
        .await;
        for step in ["prlimit", "renice", "affinity"] {
            assert!(out.contains(&format!("{step} refused")), "{step} on {target}: {out}");
        }
    }
    assert_eq!(open_files_limit(victim.id()), before);
    assert_eq!(open_files_limit(gateway), gateway_before);
    // SAFETY: getpriority has no preconditions.
    let nice = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
    assert_eq!(nice, 0, "the gateway was reniced");
    victim.kill().unwrap();
    victim.wait().unwrap();
}

#[tokio::test]
async fn proc_shows_only_the_commands_own_processes() {
    let ws = tempfile::tempdir().unwrap();
    let list = "ls /proc | grep -E '^[0-9]+$' | tr '\\n' ' '; echo";
    let (ok, out) = run(ws.path(), None, &["sh", "-c", list]).await;
    assert!(ok && out.contains(&format!(" {} ", std::process::id())), "{out}");
    let (ok, out) = run(ws.path(), Some(Network::None), &["sh", "-c", list]).await;
    assert!(ok, "{out}");
    let pids: Vec<u32> = out
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert!(!pids.contains(&std::process::id()), "{out}");
    assert!(
        pids.len() <= 6 && pids.contains(&1),
        "only the init, the shell and its pipeline: {out}"
    );
}

/// Read System V shared memory segment `key`, or say why not.
const SHM_READ: &str = r#"
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
seg = libc.shmget(int(sys.argv[1]), 0, 0)
if seg < 0:
    print("no-segment", ctypes.get_errno())
else:
    print("read:", ctypes.string_at(libc.shmat(seg, None, 0o10000), 16).decode())
"#;

/// Make System V shared memory segment `key` and leave it behind.
const SHM_MAKE: &str = r#"
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
print("made" if libc.shmget(int(sys.argv[1]), 4096, 0o1000 | 0o600) >= 0 else "refused")
"#;

fn shm_key() -> i32 {
    0x5b00_0000 | (std::process::id() as i32 & 0xffff)
}

#[tokio::test]
async fn system_v_ipc_does_not_cross_the_wall() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("read.py"), SHM_READ).unwrap();
    std::fs::write(ws.path().join("make.py"), SHM_MAKE).unwrap();
    let key = shm_key();
    // SAFETY: shmget/shmat/shmctl on a segment this test owns.
    let seg = unsafe { libc::shmget(key, 4096, libc::IPC_CREAT | 0o600) };
    assert!(seg >= 0);
    // SAFETY: as above; the mapping is 4096 bytes.
    unsafe {
        let p = libc::shmat(seg, std::ptr::null(), 0);
        std::ptr::copy_nonoverlapping(b"the-shm-secret!!".as_ptr(), p.cast::<u8>(), 16);
        libc::shmdt(p);
    }
    let arg = key.to_string();
    let (_, out) = run(ws.path(), None, &["python3", "read.py", &arg]).await;
    let (_, confined) = run(ws.path(), Some(Network::Any), &["python3", "read.py", &arg]).await;
    // SAFETY: removing the test's own segment.
    unsafe { libc::shmctl(seg, libc::IPC_RMID, std::ptr::null_mut()) };
    assert!(out.contains("read: the-shm-secret!!"), "{out}");
    assert!(
        confined.contains("no-segment") && !confined.contains("secret"),
        "{confined}"
    );

    let left = (key + 1).to_string();
    let (_, made) = run(ws.path(), Some(Network::None), &["python3", "make.py", &left]).await;
    assert!(made.contains("made"), "{made}");
    // SAFETY: a lookup of a key the command used.
    let found = unsafe { libc::shmget(key + 1, 0, 0) };
    assert!(found < 0, "a segment the command made outlived it");
}

/// Map `x` and a memory file as code, each step reporting.
const NATIVE: &str = r#"
import mmap, os
for name, flags in [("memfd", 0), ("sealed-memfd", 8)]:
    try:
        fd = os.memfd_create("x", flags)
    except OSError as e:
        print(name, "refused", e.errno)
        continue
    os.write(fd, b"\0" * 4096)
    try:
        mmap.mmap(fd, 4096, prot=mmap.PROT_READ | mmap.PROT_EXEC)
        print(name, "mapped-as-code")
    except OSError as e:
        print(name, "map-refused", e.errno)
with open("x", "rb") as f:
    try:
        mmap.mmap(f.fileno(), 4096, prot=mmap.PROT_READ | mmap.PROT_EXEC)
        print("file mapped-as-code")
    except OSError as e:
        print("file map-refused", e.errno)
print("script-ran")
"#;

#[tokio::test]
async fn native_code_from_the_workspace_does_not_run_through_any_loader() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::copy("/usr/bin/true", ws.path().join("x")).unwrap();
    std::fs::write(ws.path().join("native.py"), NATIVE).unwrap();
    let loader = ["/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1"]
        .into_iter()
        .find(|l| Path::new(l).exists())
        .expect("a dynamic loader");
    let (ok, out) = run(ws.path(), None, &[loader, "./x"]).await;
    assert!(ok, "the loader runs workspace bytes unconfined: {out}");
    let (_, out) = run(ws.path(), None, &["python3", "native.py"]).await;
    assert!(
        out.contains("memfd mapped-as-code") && out.contains("sealed-memfd mapped-as-code"),
        "{out}"
    );
    assert!(out.contains("file mapped-as-code"), "{out}");

    let (ok, out) = run(ws.path(), Some(Network::None), &[loader, "./x"]).await;
    assert!(!ok, "the loader ran workspace bytes confined: {out}");
    let (ok, out) = run(ws.path(), Some(Network::None), &["python3", "native.py"]).await;
    assert!(ok && out.contains("script-ran"), "scripts still run: {out}");
    assert!(out.contains("memfd refused 1"), "{out}");
    assert!(out.contains("sealed-memfd refused 1"), "{out}");
    assert!(out.contains("file map-refused"), "{out}");
    assert!(!out.contains("mapped-as-code"), "{out}");
}

#[tokio::test]
async fn the_private_temporary_folder_is_the_commands_alone() {
    let ws = tempfile::tempdir().unwrap();
    let (ok, out) = run(ws.path(), Some(Network::None), &["sh", "-c", "stat -c %a \"$TMPDIR\""]).await;
    assert!(ok && out.trim() == "700", "{out}");
}

#[tokio::test]
async fn the_namespaces_init_a_copy_of_the_gateway_is_out_of_reach() {
    let ws = tempfile::tempdir().unwrap();
    let script = r#"
import os, signal
for f in ("environ", "maps", "mem", "fd/0"):
    try:
        open("/proc/1/" + f, "rb").read(16)
        print(f, "read")
    except OSError as e:
        print(f, "refused", e.errno)
for sig in (signal.SIGTERM, signal.SIGKILL):
    os.kill(1, sig)
print("init alive", open("/proc/1/stat").read().split()[2] != "Z")
"#;
    let (ok, out) = run(ws.path(), Some(Network::Any), &["python3", "-c", script]).await;
    assert!(ok, "{out}");
    for f in ["environ", "maps", "mem", "fd/0"] {
        assert!(out.contains(&format!("{f} refused")), "{f}: {out}");
    }
    assert!(out.contains("init alive True"), "{out}");
}

/// A program spawned in the gateway's own process group (as MCP servers
/// are) cannot renice that group: its init's session is its own.
#[tokio::test]
async fn a_program_cannot_reach_the_process_group_it_was_started_in() {
    let ws = tempfile::tempdir().unwrap();
    // A sleeper in this test's process group stands for the gateway.
    let mut victim = std::process::Command::new("sleep").arg("60").spawn().unwrap();
    let script = "import os\nos.setpriority(os.PRIO_PGRP, 0, 19)\nprint(os.getpgrp(), os.getsid(0))\nprint('sent')\n";
    let sandbox = switchboard_sandbox::Sandbox::new(switchboard_sandbox::Settings::default());
    let mut confined = sandbox.confine(ws.path(), Network::Any).unwrap();
    let mut cmd = tokio::process::Command::new("python3");
    cmd.args(["-c", script]).current_dir(ws.path()).env_clear();
    confined.die_with_gateway();
    confined.apply(&mut cmd);
    let out = cmd.output().await.unwrap();
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", victim.id())).unwrap();
    let fields: Vec<&str> = stat.rsplit(')').next().unwrap().split_whitespace().collect();
    victim.kill().unwrap();
    victim.wait().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("sent"), "{out:?}");
    assert_eq!(fields[0], "S", "the sleeper was stopped: {stat}");
    assert_eq!(fields[16], "0", "the sleeper was reniced: {stat}");
    // SAFETY: getpriority has no preconditions.
    assert_eq!(unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) }, 0);
}
