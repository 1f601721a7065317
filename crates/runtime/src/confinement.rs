//! The configuration's words for kernel confinement, in the sandbox's
//! terms (docs/security.md).

use switchboard_config::{NetworkAccess, SandboxConfig};
use switchboard_sandbox::{Limits, Network, Sandbox, Settings};

/// The sandbox `[sandbox]` describes, on this kernel.
pub fn sandbox_of(c: &SandboxConfig) -> Sandbox {
    Sandbox::new(Settings {
        required: c.required,
        limits: Limits {
            max_processes: c.max_processes,
            max_open_files: c.max_open_files,
            max_file_size: c.max_file_size_mb.saturating_mul(1024 * 1024),
            max_cpu_secs: c.max_cpu_secs,
        },
    })
}

/// A risk profile's `network`.
pub(crate) fn network_of(n: NetworkAccess) -> Network {
    match n {
        NetworkAccess::None => Network::None,
        NetworkAccess::Loopback => Network::Loopback,
        NetworkAccess::Any => Network::Any,
    }
}
