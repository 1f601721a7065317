//! A kernel without Landlock (simulated: the probe is told the layer is
//! missing): programs are refused with the opt-out named, unless the
//! operator opted out. A binary of its own, so the switch is set before
//! the probe runs.

use switchboard_sandbox::{Network, Sandbox, Settings, Support};

#[test]
fn without_landlock_commands_are_refused_unless_the_operator_opted_out() {
    // SAFETY: the only test of this binary; set before the first probe.
    unsafe { std::env::set_var("SWITCHBOARD_SANDBOX_SIMULATE", "no-landlock") };
    assert!(!Support::get().can_confine());
    let landlock = Support::get()
        .layers()
        .into_iter()
        .find(|l| l.name == "landlock")
        .unwrap();
    assert!(!landlock.active, "{landlock:?}");
    let ws = tempfile::tempdir().unwrap();
    let refusal = Sandbox::new(Settings::default())
        .confine(ws.path(), Network::None)
        .unwrap_err();
    assert!(matches!(refusal, switchboard_sandbox::Refusal::NoLandlock), "{refusal}");
    let refusal = refusal.to_string();
    assert!(refusal.contains("cannot confine"), "{refusal}");
    assert!(refusal.contains("[sandbox] required = false"), "{refusal}");
    let opted_out = Sandbox::new(Settings {
        required: false,
        ..Settings::default()
    });
    let confined = opted_out.confine(ws.path(), Network::None).unwrap();
    assert!(!confined.is_confined());
}
