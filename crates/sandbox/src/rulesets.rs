//! The Landlock rulesets: what a confined program, or a confined file
//! operation, may touch.

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr, RulesetError, Scope, path_beneath_rules,
};
use std::path::Path;

/// The ABI whose rights we ask for (the one tested); an older kernel gets
/// what it has.
const ABI_USED: ABI = ABI::V7;

/// Programs and their libraries: read and execute.
const SYSTEM: &[&str] = &["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/// What programs commonly read from `/etc` (the loader's cache, users and
/// groups, time zone, name resolution, certificates, types) — not the
/// whole folder, which holds secrets such as `/etc/shadow`.
const ETC: &[&str] = &[
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/hosts",
    "/etc/host.conf",
    "/etc/resolv.conf",
    "/etc/gai.conf",
    "/etc/services",
    "/etc/protocols",
    "/etc/ssl/certs",
    "/etc/ssl/openssl.cnf",
    "/etc/ca-certificates",
    "/etc/mime.types",
    "/etc/magic",
    "/etc/magic.mime",
    "/etc/terminfo",
    "/etc/locale.alias",
    "/etc/os-release",
    "/etc/debian_version",
    "/etc/alternatives",
];

/// Devices every program may use.
const DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"];

/// Whether TCP is refused by Landlock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tcp {
    /// Bind and connect refused.
    Refused,
    /// Left to the network namespace.
    Allowed,
}

/// Reading files and folders (no execute).
fn read() -> BitFlags<AccessFs> {
    AccessFs::from_read(ABI_USED) & !AccessFs::Execute
}

/// The read access of `/proc`, as the raw bits the kernel takes (a fresh
/// `/proc` is added to the ruleset in the child, see `mounts`).
pub(crate) fn proc_read() -> u64 {
    read().bits()
}

/// Reading and writing, but never making device nodes.
fn read_write() -> BitFlags<AccessFs> {
    read() | (AccessFs::from_write(ABI_USED) & !(AccessFs::MakeChar | AccessFs::MakeBlock))
}

fn strict<T: Compatible>(ruleset: T) -> T {
    // Best effort: an older kernel enforces what it knows; callers check
    // the ABI themselves before relying on a layer.
    ruleset.set_compatibility(CompatLevel::BestEffort)
}

/// The ruleset of a confined program working in `workspace` with its
/// private temporary folder `tmp`.
/// `also_read`: folders it may read and run programs from besides the
/// system's (a server's installation).
pub(crate) fn command(
    workspace: &Path,
    tmp: &Path,
    also_read: &[std::path::PathBuf],
    tcp: Tcp,
) -> Result<RulesetCreated, RulesetError> {
    let mut ruleset = strict(Ruleset::default()).handle_access(AccessFs::from_all(ABI_USED))?;
    if tcp == Tcp::Refused {
        ruleset = ruleset.handle_access(AccessNet::from_all(ABI_USED))?;
    }
    let ruleset = ruleset
        .scope(Scope::from_all(ABI_USED))?
        .create()?
        .add_rules(path_beneath_rules(SYSTEM, AccessFs::from_read(ABI_USED)))?
        .add_rules(path_beneath_rules(ETC, read()))?
        .add_rules(path_beneath_rules(also_read, AccessFs::from_read(ABI_USED)))?
        .add_rules(path_beneath_rules(["/proc"], read()))?
        .add_rules(path_beneath_rules(DEVICES, AccessFs::ReadFile | AccessFs::WriteFile))?
        .add_rules(path_beneath_rules([workspace, tmp], read_write()))?;
    Ok(ruleset)
}

/// The ruleset of a thread doing file work in `workspace` (and nowhere else).
pub(crate) fn files(workspace: &Path, write: bool) -> Result<RulesetCreated, RulesetError> {
    let access = if write { read_write() } else { read() };
    strict(Ruleset::default())
        .handle_access(AccessFs::from_all(ABI_USED))?
        .create()?
        .add_rules(path_beneath_rules([workspace], access))
}
