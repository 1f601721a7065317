//! Which layers of kernel confinement hold on this machine, for
//! `switchboard check` and the startup log (docs/security.md).

use switchboard_config::SandboxConfig;
use switchboard_sandbox::Support;

/// One line per layer (`active` or `missing`, and what it means), then
/// what the operator's settings make of a missing Landlock or a missing
/// wall between commands and the gateway's process.
pub(crate) fn lines(config: &SandboxConfig) -> Vec<String> {
    let support = Support::get();
    let mut out: Vec<String> = support
        .layers()
        .into_iter()
        .map(|l| {
            format!(
                "sandbox: {} {}: {}",
                l.name,
                if l.active { "active" } else { "missing" },
                l.detail
            )
        })
        .collect();
    if let Some(w) = warning(config, support) {
        out.push(format!("warning: {w}"));
    }
    out
}

pub(crate) fn warning(config: &SandboxConfig, support: &Support) -> Option<String> {
    match (support.can_confine(), config.required) {
        (true, _) => None,
        (false, true) => Some(
            "commands are refused on this kernel (no Landlock); set [sandbox] required = false to run them unconfined".into(),
        ),
        (false, false) => Some(
            "[sandbox] required = false: commands run UNCONFINED on this kernel (no Landlock); they can reach anything this process can".into(),
        ),
    }
    .or_else(|| match (support.signals_contained(), config.required) {
        (true, _) => None,
        (false, true) => Some(
            "commands are refused on this kernel (no PID namespace and no Landlock signal scope); set [sandbox] required = false to run them anyway".into(),
        ),
        (false, false) => Some(
            "[sandbox] required = false: commands may signal and re-limit the gateway on this kernel (no PID namespace and no Landlock signal scope)".into(),
        ),
    })
}

/// Log the layers at start; a missing Landlock is a warning every time.
pub(crate) fn log_at_start(config: &SandboxConfig) {
    let support = Support::get();
    let layers = support.layers();
    let active: Vec<&str> = layers.iter().filter(|l| l.active).map(|l| l.name).collect();
    let missing: Vec<&str> = layers.iter().filter(|l| !l.active).map(|l| l.name).collect();
    tracing::info!(?active, ?missing, "tool confinement");
    if let Some(w) = warning(config, support) {
        tracing::warn!("{w}");
    }
}
