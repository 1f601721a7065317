//! Confining one program: everything is prepared in the gateway (the
//! ruleset, the cgroup, the limits, a private temporary folder), then the
//! child applies it to itself between `fork` and `exec` (`child.rs`).

use crate::Refusal;
use crate::child::Plan;
use crate::rulesets::{self, Tcp};
use crate::support::Support;
use std::ffi::CString;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// What network a confined program has.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Network {
    /// None: a network namespace with no interface up (and, as a second
    /// layer, Landlock refusing TCP bind and connect).
    #[default]
    None,
    /// A loopback of its own: the program can talk to servers it starts
    /// itself, but reaches nothing on the host, not even the gateway.
    Loopback,
    /// The host's network.
    Any,
}

/// Resource limits of one confined program and what it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Tasks (processes and threads) at once.
    pub max_processes: u32,
    /// Open files per process.
    pub max_open_files: u64,
    /// The largest file it may write, in bytes.
    pub max_file_size: u64,
    /// CPU seconds per process.
    pub max_cpu_secs: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_processes: 256,
            max_open_files: 1024,
            max_file_size: 1024 * 1024 * 1024,
            max_cpu_secs: 300,
        }
    }
}

/// The operator's settings (`[sandbox]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// Refuse to run programs when the kernel cannot confine them.
    pub required: bool,
    /// Limits for every program.
    pub limits: Limits,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            required: true,
            limits: Limits::default(),
        }
    }
}

/// Confinement for a gateway: its settings and what the kernel offers
/// (probed on first use, not when the sandbox is made).
#[derive(Debug, Clone)]
pub struct Sandbox {
    settings: Settings,
}

/// One program's confinement, ready to be put on its command. Keep it
/// until the program has ended: dropping it kills whatever the program
/// left in its cgroup and removes its temporary folder.
#[derive(Debug)]
pub struct Confined {
    plan: Option<Plan>,
    die_with: Option<libc::pid_t>,
    tmp: tempfile::TempDir,
    _cgroup: Option<crate::cgroup::Slot>,
}

impl Sandbox {
    /// A sandbox with these settings on this kernel.
    pub fn new(settings: Settings) -> Self {
        Self { settings }
    }

    /// Its settings.
    pub fn settings(&self) -> Settings {
        self.settings
    }

    /// What the kernel offers.
    pub fn support(&self) -> &'static Support {
        Support::get()
    }

    /// Prepare the confinement of a program working in `workspace`, or why
    /// it may not run (one line saying what to change).
    pub fn confine(&self, workspace: &Path, network: Network) -> Result<Confined, Refusal> {
        self.confine_reading(workspace, network, &[])
    }

    /// [`Sandbox::confine`] for a program that may also read and run what
    /// lies under `also_read` (a tool server's installation, say).
    pub fn confine_reading(
        &self,
        workspace: &Path,
        network: Network,
        also_read: &[std::path::PathBuf],
    ) -> Result<Confined, Refusal> {
        let tmp = tempfile::Builder::new()
            .prefix("switchboard-cmd-")
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir()
            .map_err(Refusal::TempDir)?;
        let support = self.support();
        if !support.can_confine() {
            if self.settings.required {
                return Err(Refusal::NoLandlock);
            }
            return Ok(Confined {
                plan: None,
                die_with: None,
                tmp,
                _cgroup: None,
            });
        }
        if !support.signals_contained() && self.settings.required {
            return Err(Refusal::SignalsUncontained {
                landlock_abi: support.landlock_abi,
            });
        }
        let limits = self.settings.limits;
        let unshare = unshare_flags(support, network)?;
        let writable = if support.private_namespaces() {
            let c = |p: &Path| {
                let p = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
                CString::new(p.as_os_str().as_bytes()).map_err(|_| Refusal::NulInPath)
            };
            Some([c(workspace)?, c(tmp.path())?])
        } else {
            None
        };
        let tcp = if network == Network::None {
            Tcp::Refused
        } else {
            Tcp::Allowed
        };
        let ruleset = rulesets::command(workspace, tmp.path(), also_read, tcp).map_err(Refusal::Rules)?;
        let cgroup = support
            .pids_cgroup
            .as_ref()
            .and_then(|cg| cg.slot(limits.max_processes));
        let plan = Plan {
            cgroup_procs: cgroup.as_ref().map(|s| s.procs.clone()),
            unshare,
            die_with: None,
            proc_read: rulesets::proc_read(),
            loopback_up: network == Network::Loopback,
            writable,
            cwd: None,
            limits: rlimits(limits, support.namespaces),
            ruleset: Option::<OwnedFd>::from(ruleset),
            seccomp: crate::seccomp::filter(network == Network::None, unshare & libc::CLONE_NEWPID != 0),
        };
        Ok(Confined {
            plan: Some(plan),
            die_with: None,
            tmp,
            _cgroup: cgroup,
        })
    }
}

/// The namespaces a program gets on this system with `network`, or why
/// it may not run.
fn unshare_flags(support: &Support, network: Network) -> Result<libc::c_int, Refusal> {
    if !support.private_namespaces() {
        if network == Network::Loopback {
            return Err(Refusal::NoLoopback);
        }
        return Ok(0);
    }
    let mut unshare = libc::CLONE_NEWNS;
    if support.namespaces {
        unshare |= libc::CLONE_NEWUSER;
    }
    if support.pid_namespace {
        unshare |= libc::CLONE_NEWPID;
    }
    if support.ipc_namespace {
        unshare |= libc::CLONE_NEWIPC | libc::CLONE_NEWUTS;
    }
    if network != Network::Any {
        unshare |= libc::CLONE_NEWNET;
    }
    Ok(unshare)
}

/// `(resource, soft, hard)` for `limits`; the process count only in a user
/// namespace of its own (`own_user_ns`): without one it would count the
/// gateway's own threads too.
fn rlimits(limits: Limits, own_user_ns: bool) -> Vec<(libc::__rlimit_resource_t, u64, u64)> {
    let processes = u64::from(limits.max_processes);
    [
        own_user_ns.then_some((libc::RLIMIT_NPROC, processes, processes)),
        Some((libc::RLIMIT_NOFILE, limits.max_open_files, limits.max_open_files)),
        Some((libc::RLIMIT_FSIZE, limits.max_file_size, limits.max_file_size)),
        Some((
            libc::RLIMIT_CPU,
            limits.max_cpu_secs,
            limits.max_cpu_secs.saturating_add(1),
        )),
        Some((libc::RLIMIT_CORE, 0, 0)),
    ]
    .into_iter()
    .flatten()
    .collect()
}

impl Confined {
    /// The program's private temporary folder (give it as `TMPDIR`).
    pub fn tmp(&self) -> &Path {
        self.tmp.path()
    }

    /// Whether the kernel confines this program (false when unconfined
    /// programs were allowed on a kernel that cannot).
    pub fn is_confined(&self) -> bool {
        self.plan.is_some()
    }

    /// Make the program die with the gateway, even when the gateway is
    /// killed with `kill -9` (no destructor runs then): the parent-death
    /// signal, and in a PID namespace everything the program started goes
    /// with it. Spawn from a thread that lives as long as the gateway (a
    /// runtime worker): the signal follows the spawning thread.
    pub fn die_with_gateway(&mut self) {
        // SAFETY: getpid has no preconditions.
        self.die_with = Some(unsafe { libc::getpid() });
    }

    /// Put the confinement on `cmd`: its child confines itself before
    /// `exec`, and `TMPDIR` points at the private temporary folder.
    pub fn apply(&mut self, cmd: &mut tokio::process::Command) {
        cmd.env("TMPDIR", self.tmp.path());
        let Some(mut plan) = self.plan.take() else {
            if let Some(gateway) = self.die_with {
                // SAFETY: prctl and getppid are async-signal-safe.
                unsafe {
                    cmd.pre_exec(move || crate::child::die_with(gateway));
                }
            }
            return;
        };
        plan.die_with = self.die_with;
        plan.cwd = cmd
            .as_std()
            .get_current_dir()
            .and_then(|d| CString::new(d.as_os_str().as_bytes()).ok());
        // SAFETY: `Plan::apply` makes only async-signal-safe system calls
        // on memory prepared before the fork (see child.rs).
        unsafe {
            cmd.pre_exec(move || plan.apply());
        }
    }
}
