//! `[sandbox]`: how programs started by tools are confined by the kernel
//! (docs/security.md), and the network a risk profile gives them.

use serde::{Deserialize, Serialize};

/// `[sandbox]`: kernel confinement of tools.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(default)]
pub struct SandboxConfig {
    /// Refuse commands when the kernel cannot confine them (no Landlock); `false` runs them unconfined and logs a warning at every start (default true).
    pub required: bool,
    /// Tasks (processes and threads) one command and what it starts may have at once (default 256).
    pub max_processes: u32,
    /// Open files per process of a command (default 1024).
    pub max_open_files: u64,
    /// The largest file a command may write, in MiB (default 1024).
    pub max_file_size_mb: u64,
    /// CPU seconds per process of a command (default 300).
    pub max_cpu_secs: u64,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        Self {
            required: true,
            max_processes: 256,
            max_open_files: 1024,
            max_file_size_mb: 1024,
            max_cpu_secs: 300,
        }
    }
}

/// `network` in a risk profile: what network commands have.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NetworkAccess {
    /// No network at all (default).
    #[default]
    None,
    /// A loopback of the command's own: servers it starts itself, nothing on the host.
    Loopback,
    /// The host's network.
    Any,
}
