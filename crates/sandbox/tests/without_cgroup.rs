//! A gateway that may make no pids cgroup (simulated): what a command
//! leaves running, even after leaving its process group with `setsid`,
//! still ends with it, because its PID namespace's init takes everything
//! with it. A binary of its own, so the switch is set before the probe.

use switchboard_sandbox::{Network, Sandbox, Settings, Support};

#[tokio::test]
async fn without_a_cgroup_the_pid_namespace_ends_what_a_command_left() {
    // SAFETY: the only test of this binary; set before the first probe.
    unsafe { std::env::set_var("SWITCHBOARD_SANDBOX_SIMULATE", "no-cgroup") };
    assert!(Support::get().pid_namespace);
    let ws = tempfile::tempdir().unwrap();
    let script = "setsid sh -c 'sleep 1; touch late' >/dev/null 2>&1 < /dev/null & echo started";
    let mut confined = Sandbox::new(Settings::default())
        .confine(ws.path(), Network::None)
        .unwrap();
    let mut cmd = tokio::process::Command::new("sh");
    cmd.args(["-c", script]).current_dir(ws.path()).env_clear();
    confined.apply(&mut cmd);
    let out = cmd.output().await.unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("started"));
    // Unconfined, the same script leaves `late` behind (it is real).
    let free = tempfile::tempdir().unwrap();
    let out = std::process::Command::new("sh")
        .args(["-c", script])
        .current_dir(free.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    tokio::time::sleep(std::time::Duration::from_millis(1800)).await;
    assert!(free.path().join("late").exists(), "the unconfined leftover ran");
    assert!(
        !ws.path().join("late").exists(),
        "a process that left the group outlived the command"
    );
}
