//! The steps a confined program's process takes on itself between `fork`
//! and `exec`. Only plain system calls happen here — no allocation, no
//! locks — because the gateway is multi-threaded and a forked child may
//! only do what is async-signal-safe. Everything is prepared before the
//! fork (`command.rs`).

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

/// What the child does to itself, in this order.
#[derive(Debug)]
pub(crate) struct Plan {
    /// `cgroup.procs` of the command's pids cgroup, joined first (while
    /// the process still has its privileges in the gateway's namespace).
    pub(crate) cgroup_procs: Option<CString>,
    /// `unshare` flags: a user namespace (no capabilities outside it),
    /// mount, PID, IPC and UTS namespaces, and, without network, a network
    /// namespace.
    pub(crate) unshare: libc::c_int,
    /// The gateway's pid, when the program must die with the gateway
    /// (even on `kill -9`): the parent-death signal, set after `unshare`
    /// (entering a user namespace clears it).
    pub(crate) die_with: Option<libc::pid_t>,
    /// The Landlock read access to give a fresh `/proc` (in a PID
    /// namespace of its own with a mount namespace).
    pub(crate) proc_read: u64,
    /// Bring the private network namespace's loopback up.
    pub(crate) loopback_up: bool,
    /// In a mount namespace of its own: every mount read-only except
    /// these folders (the workspace and the temporary folder), so what
    /// Landlock does not mediate (chmod, chown, times, extended
    /// attributes, device nodes) cannot touch anything outside them.
    pub(crate) writable: Option<[CString; 2]>,
    /// The working folder, entered again after the mounts (the one entered
    /// before them lies on the read-only mount below the bind).
    pub(crate) cwd: Option<CString>,
    /// `(resource, soft, hard)`, set after `unshare` so the process count
    /// is counted in the new user namespace.
    pub(crate) limits: Vec<(libc::__rlimit_resource_t, u64, u64)>,
    /// The Landlock ruleset to restrict the process with.
    pub(crate) ruleset: Option<OwnedFd>,
    /// The seccomp filter, installed last (see `seccomp`).
    pub(crate) seccomp: Vec<libc::sock_filter>,
}

fn check(r: libc::c_int) -> io::Result<()> {
    if r < 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
}

impl Plan {
    /// Apply the plan to the calling (forked, single-threaded) process.
    pub(crate) fn apply(&self) -> io::Result<()> {
        // SAFETY (whole function): plain system calls on memory prepared
        // before the fork; nothing allocates or takes a lock.
        unsafe {
            if let Some(procs) = &self.cgroup_procs {
                let fd = libc::open(procs.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                check(fd)?;
                let written = libc::write(fd, b"0".as_ptr().cast(), 1);
                libc::close(fd);
                if written != 1 {
                    return Err(io::Error::last_os_error());
                }
            }
            crate::init::default_handlers();
            if self.unshare != 0 {
                check(libc::unshare(self.unshare))?;
            }
            if let Some(gateway) = self.die_with {
                die_with(gateway)?;
            }
            let pid_namespace = self.unshare & libc::CLONE_NEWPID != 0;
            // From here on this is the namespace's init (the keeper waits
            // outside and never returns).
            let init = if pid_namespace {
                Some(crate::init::split()?)
            } else {
                None
            };
            if self.loopback_up {
                loopback_up()?;
            }
            if let Some(writable) = &self.writable {
                crate::mounts::read_only_but(writable)?;
                if pid_namespace {
                    let ruleset = self.ruleset.as_ref().map_or(-1, AsRawFd::as_raw_fd);
                    crate::mounts::fresh_proc(ruleset, self.proc_read)?;
                }
                if let Some(cwd) = &self.cwd {
                    check(libc::chdir(cwd.as_ptr()))?;
                }
            }
            for &(resource, soft, hard) in &self.limits {
                let limit = libc::rlimit {
                    rlim_cur: soft,
                    rlim_max: hard,
                };
                check(libc::setrlimit(resource, &limit))?;
            }
            drop_capabilities()?;
            check(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))?;
            if let Some(ruleset) = &self.ruleset {
                let r = libc::syscall(libc::SYS_landlock_restrict_self, ruleset.as_raw_fd(), 0u32);
                if r != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            crate::seccomp::install(&self.seccomp)?;
            if let Some(init) = init {
                // Returns only in the program's process.
                init.start()?;
            }
        }
        Ok(())
    }
}

/// Die (`SIGKILL`) when the parent, `gateway`, does; fails if it already
/// has.
pub(crate) fn die_with(gateway: libc::pid_t) -> io::Result<()> {
    // SAFETY: prctl and getppid are async-signal-safe and touch no memory.
    unsafe {
        check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL))?;
        if libc::getppid() != gateway {
            // ESRCH: the gateway is gone (no allocation after the fork).
            return Err(io::Error::from_raw_os_error(libc::ESRCH));
        }
    }
    Ok(())
}

/// Drop every capability, for good: the bounding set (so not even a
/// root-owned program regains one at `exec`), the ambient set, and the
/// process's own sets. Without a user namespace this is what keeps a
/// root gateway's commands from being root in anything but file owner.
///
/// # Safety
/// Plain system calls; call only in the child before `exec`.
unsafe fn drop_capabilities() -> io::Result<()> {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: libc::c_int,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const VERSION_3: u32 = 0x2008_0522;
    // SAFETY: prctl and capset with plain values and stack memory.
    unsafe {
        for cap in 0..64 {
            // Fails (EINVAL) past the last capability, or (EPERM) for a
            // process that holds none: both leave nothing to drop.
            libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0);
        }
        libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
        let mut header = Header {
            version: VERSION_3,
            pid: 0,
        };
        let data = [Data {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        let r = libc::syscall(libc::SYS_capset, &mut header as *mut Header, data.as_ptr());
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Set `lo` up in the process's (new) network namespace.
///
/// # Safety
/// Plain system calls; call only in the child before `exec`.
unsafe fn loopback_up() -> io::Result<()> {
    // SAFETY: socket/ioctl/close on a zeroed, NUL-terminated ifreq.
    unsafe {
        let sock = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        check(sock)?;
        let mut req: libc::ifreq = std::mem::zeroed();
        req.ifr_name[0] = b'l' as libc::c_char;
        req.ifr_name[1] = b'o' as libc::c_char;
        let mut r = libc::ioctl(sock, libc::SIOCGIFFLAGS, &mut req);
        if r == 0 {
            req.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
            r = libc::ioctl(sock, libc::SIOCSIFFLAGS, &req);
        }
        let err = io::Error::last_os_error();
        libc::close(sock);
        if r != 0 { Err(err) } else { Ok(()) }
    }
}
