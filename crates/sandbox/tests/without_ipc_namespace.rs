//! A system that allows no IPC namespace (simulated): `check` says the
//! layer is missing, and what it means is real — a command reads System V
//! shared memory another process of the same user made. A binary of its
//! own, so the switch is set before the probe runs.

mod common;

use switchboard_sandbox::{Limits, Network, Support};

#[tokio::test]
async fn without_an_ipc_namespace_the_layer_is_reported_missing() {
    // SAFETY: the only test of this binary; set before the first probe.
    unsafe { std::env::set_var("SWITCHBOARD_SANDBOX_SIMULATE", "no-ipc-namespace") };
    let support = Support::get();
    assert!(!support.ipc_namespace && support.pid_namespace);
    let layer = support
        .layers()
        .into_iter()
        .find(|l| l.name == "ipc-namespace")
        .unwrap();
    assert!(
        !layer.active && layer.detail.contains("share System V IPC"),
        "{layer:?}"
    );
    let key = 0x5c00_0000 | (std::process::id() as i32 & 0xffff);
    // SAFETY: a segment this test makes and removes.
    let seg = unsafe { libc::shmget(key, 4096, libc::IPC_CREAT | 0o600) };
    assert!(seg >= 0);
    let ws = tempfile::tempdir().unwrap();
    let script = format!(
        "import ctypes\nlibc = ctypes.CDLL(None)\nprint('found' if libc.shmget({key}, 0, 0) >= 0 else 'absent')\n"
    );
    let (_, out) = common::run_as(
        ws.path(),
        Some((Network::None, Limits::default())),
        &["python3", "-c", &script],
    )
    .await;
    // SAFETY: removing the test's own segment.
    unsafe { libc::shmctl(seg, libc::IPC_RMID, std::ptr::null_mut()) };
    assert!(out.contains("found"), "without the layer the segment is shared: {out}");
}
