//! What this kernel offers for confinement, probed once per process.
//!
//! `SWITCHBOARD_SANDBOX_SIMULATE` (a comma list of `no-landlock`,
//! `no-namespaces`, `no-pid-namespace`, `no-ipc-namespace`,
//! `no-landlock-scopes` (an ABI below 6), `no-cgroup`) makes the probe report a layer missing
//! although the kernel has it, so tests can show what happens on such a
//! kernel. It can only take layers away, never add one.

use crate::cgroup::PidsCgroup;
use std::sync::OnceLock;

/// The layers this kernel can give a confined program.
#[derive(Debug, Clone)]
pub struct Support {
    /// The Landlock ABI version (0: no Landlock).
    pub landlock_abi: i32,
    /// User namespaces, and with them mount and network namespaces.
    pub namespaces: bool,
    /// Mount and network namespaces without a user namespace (root only).
    pub root_namespaces: bool,
    /// A PID namespace per program (with the private namespaces above).
    pub pid_namespace: bool,
    /// IPC and UTS namespaces per program.
    pub ipc_namespace: bool,
    /// A pids cgroup the gateway may create per command, where it can.
    pub(crate) pids_cgroup: Option<PidsCgroup>,
    /// The gateway runs as root (process limits then need the cgroup).
    pub root: bool,
}

/// One layer of confinement and whether it holds here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layer {
    /// Its name, as `switchboard check` prints it.
    pub name: &'static str,
    /// Whether it is active.
    pub active: bool,
    /// What it does, or why it is not active.
    pub detail: String,
}

const SIMULATE: &str = "SWITCHBOARD_SANDBOX_SIMULATE";

impl Support {
    /// The probe's answer for this process (probed on first use).
    pub fn get() -> &'static Support {
        static SUPPORT: OnceLock<Support> = OnceLock::new();
        SUPPORT.get_or_init(Support::probe)
    }

    fn probe() -> Support {
        let simulated = std::env::var(SIMULATE).unwrap_or_default();
        let off = |layer: &str| simulated.split(',').any(|s| s.trim() == layer);
        let mut landlock_abi = if off("no-landlock") { 0 } else { landlock_abi() };
        if off("no-landlock-scopes") {
            landlock_abi = landlock_abi.min(5);
        }
        let all = libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWNET;
        let extra = libc::CLONE_NEWPID | libc::CLONE_NEWIPC | libc::CLONE_NEWUTS;
        // One child answers for every namespace where all are allowed (the
        // usual case); the others are asked one by one only if not.
        let together = !off("no-namespaces") && namespaces_work(all | extra);
        let namespaces = together || (!off("no-namespaces") && namespaces_work(all));
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        let root_namespaces = root && !off("no-namespaces") && namespaces_work(libc::CLONE_NEWNS | libc::CLONE_NEWNET);
        // Made together with the user namespace (or as root without one).
        let base = if namespaces { libc::CLONE_NEWUSER } else { 0 };
        let private = namespaces || root_namespaces;
        let pid_namespace =
            private && !off("no-pid-namespace") && (together || namespaces_work(base | libc::CLONE_NEWPID));
        let ipc_namespace = private
            && !off("no-ipc-namespace")
            && (together || namespaces_work(base | libc::CLONE_NEWIPC | libc::CLONE_NEWUTS));
        let pids_cgroup = if off("no-cgroup") { None } else { PidsCgroup::find() };
        Support {
            landlock_abi,
            namespaces,
            root_namespaces,
            pid_namespace,
            ipc_namespace,
            pids_cgroup,
            root,
        }
    }

    /// Whether programs and file operations can be confined at all.
    pub fn can_confine(&self) -> bool {
        self.landlock_abi >= 1
    }

    /// Whether a command can neither signal nor re-limit processes outside
    /// it: a PID namespace of its own, or at least Landlock's signal scope
    /// (ABI 6) with seccomp refusing the calls that name another process.
    pub fn signals_contained(&self) -> bool {
        self.pid_namespace || self.landlock_abi >= 6
    }

    /// Whether a command gets mount and network namespaces of its own.
    pub fn private_namespaces(&self) -> bool {
        self.namespaces || self.root_namespaces
    }

    /// The layers, for `switchboard check` and the startup log.
    pub fn layers(&self) -> Vec<Layer> {
        let abi = self.landlock_abi;
        let mut layers = vec![Layer {
            name: "landlock",
            active: abi >= 1,
            detail: if abi >= 1 {
                format!("ABI {abi}: files outside the workspace and system folders are out of reach")
            } else {
                "not offered by this kernel: commands and file tools cannot be confined".into()
            },
        }];
        layers.push(Layer {
            name: "namespaces",
            active: self.private_namespaces(),
            detail: if self.namespaces {
                "user, mount and network namespaces: no capabilities, everything but the workspace read-only, no network unless the risk profile allows it".into()
            } else if self.root_namespaces {
                "mount and network namespaces (no user namespaces here; capabilities are dropped instead)".into()
            } else {
                "not allowed here: no private network and no read-only system (seccomp refuses sockets for network = \"none\")".into()
            },
        });
        layers.push(Layer {
            name: "pid-namespace",
            active: self.pid_namespace,
            detail: if self.pid_namespace {
                "a PID namespace per command and MCP server, its own init as pid 1: nothing inside can name the gateway or another process, and what a program leaves ends with it".into()
            } else if self.landlock_abi >= 6 {
                "not allowed here: seccomp refuses calls naming another process, Landlock's signal scope holds signals".into()
            } else {
                "not allowed here, and no Landlock signal scope (ABI 6): commands are refused unless [sandbox] required = false".into()
            },
        });
        layers.push(Layer {
            name: "ipc-namespace",
            active: self.ipc_namespace,
            detail: if self.ipc_namespace {
                "IPC and UTS namespaces per command: no System V IPC or POSIX message queues shared with other processes".into()
            } else {
                "not allowed here: commands share System V IPC with processes of the same user".into()
            },
        });
        layers.push(Layer {
            name: "seccomp",
            active: cfg!(any(target_arch = "x86_64", target_arch = "aarch64")),
            detail: "no UNIX sockets (no sockets at all without network), io_uring, eBPF, keyrings, inotify, executable memory files".into(),
        });
        layers.push(Layer {
            name: "landlock-network",
            active: abi >= 4,
            detail: if abi >= 4 {
                "TCP bind and connect refused for network = \"none\"".into()
            } else {
                "needs Landlock ABI 4".into()
            },
        });
        layers.push(Layer {
            name: "landlock-scopes",
            active: abi >= 6,
            detail: if abi >= 6 {
                "no signals or abstract sockets to processes outside the command".into()
            } else {
                "needs Landlock ABI 6: commands may signal the gateway's other processes".into()
            },
        });
        let (active, detail) = match (&self.pids_cgroup, self.root, self.namespaces) {
            (Some(cg), _, _) => (true, format!("a pids cgroup per command under {}", cg.base().display())),
            (None, false, true) => (true, "RLIMIT_NPROC counted per command (own user namespace)".into()),
            (None, false, false) => (
                false,
                "no pids cgroup and no user namespace: the process limit does not hold".into(),
            ),
            (None, true, _) => (
                false,
                "running as root without a pids cgroup: the process limit does not hold (run as a service user)".into(),
            ),
        };
        layers.push(Layer {
            name: "process-limit",
            active,
            detail,
        });
        layers
    }
}

/// The Landlock ABI version the kernel reports (0 without Landlock).
fn landlock_abi() -> i32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attribute, size 0 and the VERSION flag, the call
    // only returns the ABI version (or an error).
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    i32::try_from(v).unwrap_or(0).max(0)
}

/// Whether a child may make the namespaces `flags` name.
fn namespaces_work(flags: libc::c_int) -> bool {
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new("/bin/true");
    // SAFETY: unshare is async-signal-safe and touches only the child.
    unsafe {
        cmd.pre_exec(move || {
            if libc::unshare(flags) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
