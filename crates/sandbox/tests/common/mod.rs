//! What the kernel-layer test binaries share: running a program the way
//! the shell tool does, confined or not.

use std::path::Path;
use switchboard_sandbox::{Limits, Network, Sandbox, Settings};

/// Run `argv` in `ws`, confined (with `network`) or not; success and all output.
pub(crate) async fn run_as(ws: &Path, confine: Option<(Network, Limits)>, argv: &[&str]) -> (bool, String) {
    let mut cmd = tokio::process::Command::new(argv[0]);
    cmd.args(&argv[1..])
        .current_dir(ws)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", "/nonexistent")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdin(std::process::Stdio::null())
        .process_group(0)
        .kill_on_drop(true);
    let mut confined = confine.map(|(network, limits)| {
        let sandbox = Sandbox::new(Settings { required: true, limits });
        sandbox.confine(ws, network).expect("this kernel confines")
    });
    if let Some(c) = confined.as_mut() {
        c.apply(&mut cmd);
    }
    let out = tokio::time::timeout(std::time::Duration::from_secs(60), cmd.output())
        .await
        .expect("the command ended")
        .expect("the command started");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}
