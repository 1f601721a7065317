//! Kernel confinement for what agents' tools do (docs/security.md).
//!
//! Checking a command's words can only ever refuse what someone thought
//! of; the kernel holds whatever the words were. Every program a tool
//! starts runs, from before its `exec`, inside:
//!
//! * a Landlock domain (`rules`): read and execute on the system
//!   directories, read on a few files of `/etc` and on `/proc`, read and
//!   write on the agent's workspace and a private temporary folder, nothing
//!   else — inherited by everything the program starts, whatever links or
//!   configuration it follows; signals and abstract sockets stay inside;
//! * a user namespace of its own, so it holds no capability outside it
//!   (and every capability dropped besides), and (unless its risk profile
//!   allows the network) a network namespace of its own;
//! * PID, IPC and UTS namespaces of its own: a small init as pid 1
//!   (`init`) reaps, and when the program ends takes everything it left
//!   with it; nothing inside can name the gateway or any other process by
//!   pid, and `/proc` shows only the namespace's processes;
//! * a mount namespace in which everything but the workspace and its
//!   temporary folder is read-only (what Landlock does not mediate:
//!   chmod, chown, times, extended attributes), and those two are
//!   `noexec`, `nosuid`, `nodev` (`mounts`);
//! * a seccomp filter refusing UNIX sockets (and all sockets without
//!   network), io_uring, eBPF, keyrings and the like (`seccomp`);
//! * resource limits and a pids cgroup where one can be made (`limits`,
//!   `cgroup`), with `no_new_privs`.
//!
//! File tools do their filesystem work on a short-lived thread confined to
//! the workspace the same way (`fs`). What this kernel offers is probed
//! once (`support`); where it cannot confine, callers refuse unless the
//! operator opted out.

mod cgroup;
mod child;
mod command;
pub mod fs;
mod init;
mod mounts;
mod refusal;
mod rulesets;
mod seccomp;
mod support;

pub use command::{Confined, Limits, Network, Sandbox, Settings};
pub use refusal::Refusal;
pub use support::{Layer, Support};
