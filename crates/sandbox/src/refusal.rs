//! Why a program may not be started confined: each case says what to
//! change, in one line an operator can act on.

use std::io;

/// Why [`crate::Sandbox::confine`] refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    /// The kernel has no Landlock and confinement is required.
    #[error(
        "commands are refused: this kernel cannot confine them (no Landlock), so a command could reach outside the workspace; to run them unconfined anyway, set [sandbox] required = false"
    )]
    NoLandlock,
    /// Neither a PID namespace nor Landlock's signal scope, and confinement is required.
    #[error(
        "commands are refused: this kernel gives them neither a PID namespace nor Landlock's signal scope (ABI 6, this kernel has {landlock_abi}), so a command could signal or re-limit the gateway; allow unprivileged user namespaces (or run on Linux 6.12 or later), or, to run them anyway, set [sandbox] required = false"
    )]
    SignalsUncontained {
        /// The Landlock ABI this kernel has.
        landlock_abi: i32,
    },
    /// `network = "loopback"` without network namespaces.
    #[error(
        "network = \"loopback\" needs network namespaces, which this system does not allow; use \"none\" or \"any\" in the risk profile"
    )]
    NoLoopback,
    /// A folder name the kernel cannot be given.
    #[error("a folder name holds a NUL byte")]
    NulInPath,
    /// The command's private temporary folder could not be made.
    #[error("cannot make the command's temporary folder: {0}")]
    TempDir(#[source] io::Error),
    /// The Landlock rules could not be built.
    #[error("cannot prepare the confinement: {0}")]
    Rules(#[source] landlock::RulesetError),
}
