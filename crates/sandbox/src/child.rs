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
    /// `unshare` flags: a user namespace (no capabilities outside it) and,
    /// without network, a network namespace.
    pub(crate) unshare: libc::c_int,
    /// Bring the private network namespace's loopback up.
    pub(crate) loopback_up: bool,
    /// `(resource, soft, hard)`, set after `unshare` so the process count
    /// is counted in the new user namespace.
    pub(crate) limits: Vec<(libc::__rlimit_resource_t, u64, u64)>,
    /// The Landlock ruleset to restrict the process with, last.
    pub(crate) ruleset: Option<OwnedFd>,
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
            if self.unshare != 0 {
                check(libc::unshare(self.unshare))?;
            }
            if self.loopback_up {
                loopback_up()?;
            }
            for &(resource, soft, hard) in &self.limits {
                let limit = libc::rlimit {
                    rlim_cur: soft,
                    rlim_max: hard,
                };
                check(libc::setrlimit(resource, &limit))?;
            }
            check(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))?;
            if let Some(ruleset) = &self.ruleset {
                let r = libc::syscall(libc::SYS_landlock_restrict_self, ruleset.as_raw_fd(), 0u32);
                if r != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
        }
        Ok(())
    }
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
