//! A kernel with neither a PID namespace nor Landlock's signal scope
//! (Landlock ABI below 6, as Linux 6.1 or 6.8; simulated): a command could
//! signal the gateway, so commands are refused unless the operator opted
//! out. A binary of its own, so the switch is set before the probe runs.

use switchboard_sandbox::{Limits, Network, Sandbox, Settings, Support};

#[test]
fn without_pid_namespace_or_signal_scope_commands_are_refused_unless_opted_out() {
    // SAFETY: the only test of this binary; set before the first probe.
    unsafe { std::env::set_var("SWITCHBOARD_SANDBOX_SIMULATE", "no-pid-namespace,no-landlock-scopes") };
    let support = Support::get();
    assert!(!support.pid_namespace && support.landlock_abi < 6);
    let ws = tempfile::tempdir().unwrap();
    let refusal = Sandbox::new(Settings::default())
        .confine(ws.path(), Network::None)
        .unwrap_err();
    assert!(
        refusal
            .to_string()
            .contains("neither a PID namespace nor Landlock's signal scope"),
        "{refusal}"
    );
    assert!(refusal.to_string().contains("[sandbox] required = false"), "{refusal}");
    let layers = support.layers();
    let pid = layers.iter().find(|l| l.name == "pid-namespace").unwrap();
    assert!(!pid.active && pid.detail.contains("commands are refused"), "{pid:?}");
    let opted_out = Sandbox::new(Settings {
        required: false,
        limits: Limits::default(),
    });
    let confined = opted_out.confine(ws.path(), Network::None).unwrap();
    assert!(confined.is_confined(), "the layers that exist still hold");
}
