//! A system that allows no PID namespace (simulated: the probe is told it
//! is missing): seccomp is the second line, refusing the calls that act on
//! another process by pid. A binary of its own, so the switch is set before
//! the probe runs. The test process stands for the gateway.

use switchboard_sandbox::{Network, Sandbox, Settings, Support};

/// Each step on process `pid`, reporting.
const STEPS: &str = r#"
import ctypes, os, resource, sys
pid = int(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)
for name, step in [
    ("prlimit", lambda: resource.prlimit(pid, resource.RLIMIT_NOFILE, (777, 777))),
    ("renice", lambda: os.setpriority(os.PRIO_PROCESS, pid, 19)),
    ("renice-user", lambda: os.setpriority(os.PRIO_USER, 0, 19)),
    ("affinity", lambda: os.sched_setaffinity(pid, {0})),
    ("pidfd", lambda: os.pidfd_open(pid)),
]:
    try:
        step()
        print(name, "done")
    except OSError as e:
        print(name, "refused", e.errno)
print("attach", "refused" if libc.ptrace(16, pid, None, None) != 0 else "done", ctypes.get_errno())
resource.prlimit(0, resource.RLIMIT_NOFILE, (500, 500))
print("own limit", resource.getrlimit(resource.RLIMIT_NOFILE)[0])
"#;

#[tokio::test]
async fn without_a_pid_namespace_seccomp_refuses_calls_on_other_processes() {
    // SAFETY: the only test of this binary; set before the first probe.
    unsafe { std::env::set_var("SWITCHBOARD_SANDBOX_SIMULATE", "no-pid-namespace") };
    assert!(!Support::get().pid_namespace);
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("steps.py"), STEPS).unwrap();
    let sandbox = Sandbox::new(Settings::default());
    let gateway = std::process::id();
    let limits = std::fs::read_to_string(format!("/proc/{gateway}/limits")).unwrap();
    let mut confined = sandbox.confine(ws.path(), Network::Any).unwrap();
    let mut cmd = tokio::process::Command::new("python3");
    cmd.args(["steps.py", &gateway.to_string()])
        .current_dir(ws.path())
        .env_clear();
    confined.apply(&mut cmd);
    let out = cmd.output().await.unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    for step in ["prlimit", "renice", "renice-user", "affinity", "pidfd"] {
        assert!(text.contains(&format!("{step} refused 1")), "{step}: {text}");
    }
    assert!(text.contains("attach refused 1"), "{text}");
    // Its own limits it may still lower.
    assert!(text.contains("own limit 500"), "{text}");
    assert_eq!(
        std::fs::read_to_string(format!("/proc/{gateway}/limits")).unwrap(),
        limits
    );
    // SAFETY: getpriority has no preconditions.
    assert_eq!(unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) }, 0);
}
