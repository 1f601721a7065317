//! A system that allows no namespaces (simulated: the probe is told they
//! are missing), as under some container runtimes: commands still hold no
//! capability — even when the gateway runs as root — and without network
//! they can open no socket at all, since seccomp stands in for the
//! network namespace. A binary of its own, so the switch is set before the
//! probe runs.

use switchboard_sandbox::{Network, Sandbox, Settings, Support};

#[tokio::test]
async fn without_namespaces_commands_hold_no_capability_and_no_socket() {
    // SAFETY: the only test of this binary; set before the first probe.
    unsafe { std::env::set_var("SWITCHBOARD_SANDBOX_SIMULATE", "no-namespaces") };
    assert!(!Support::get().private_namespaces());
    let ws = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::new(Settings::default());
    let refusal = sandbox.confine(ws.path(), Network::Loopback).unwrap_err();
    assert!(matches!(refusal, switchboard_sandbox::Refusal::NoLoopback), "{refusal}");
    assert!(refusal.to_string().contains("needs network namespaces"), "{refusal}");
    let script = "import socket\nprint(open('/proc/self/status').read())\ntry:\n    socket.socket(socket.AF_INET, socket.SOCK_DGRAM); print('socket-made')\nexcept OSError as e:\n    print('socket-refused', e)\n";
    let mut confined = sandbox.confine(ws.path(), Network::None).unwrap();
    let mut cmd = tokio::process::Command::new("python3");
    cmd.args(["-c", script]).current_dir(ws.path()).env_clear();
    confined.apply(&mut cmd);
    let out = cmd.output().await.unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text} {}", String::from_utf8_lossy(&out.stderr));
    for line in text.lines().filter(|l| l.starts_with("Cap")) {
        assert!(line.ends_with("0000000000000000"), "{line}");
    }
    assert!(text.contains("socket-refused"), "{text}");
    assert!(text.contains("NoNewPrivs:\t1"), "{text}");
}
