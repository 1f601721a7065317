//! The PID namespace's small init (docs/security.md, "PID namespace").
//!
//! After `unshare(CLONE_NEWPID)` only the calling process's *children* are
//! in the new namespace, so the process the gateway started (the
//! "keeper") forks once more: that child is pid 1 of the namespace (the
//! "init"). The init confines itself, forks the program's process, and
//! then only reaps: every orphan of the namespace comes to it. When the
//! program's process ends, the init reports its status to the keeper and
//! exits — and the kernel kills whatever is left in the namespace, even a
//! process that left the process group. The keeper, which the gateway
//! waits for, ends the way the program ended.
//!
//! Nothing inside the namespace can name the gateway, or any process
//! outside, by pid: `kill`, `prlimit`, `setpriority`, `ptrace` and the
//! like find no such process.
//!
//! Like everything between `fork` and `exec`, only plain system calls
//! happen here (no allocation, no locks): the keeper and the init are
//! copies of the multi-threaded gateway that never `exec`. `fork` is the
//! raw `clone` system call, so no `atfork` handler (which may take a lock
//! another thread held) runs. Both make themselves non-dumpable, so a
//! program cannot read their memory — a copy of the gateway's — through
//! `/proc` or `ptrace`, and both close every descriptor they inherited
//! but the status pipe.

use std::io;

/// What the init keeps: the pipe it reports the program's status on.
#[derive(Debug)]
pub(crate) struct Init {
    status: libc::c_int,
}

fn check(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 { Err(io::Error::last_os_error()) } else { Ok(r) }
}

/// `fork` without `atfork` handlers. Returns the child's pid, or 0 in the
/// child.
///
/// # Safety
/// Only in a single-threaded process that goes on with plain system calls.
unsafe fn raw_fork() -> io::Result<libc::pid_t> {
    // SAFETY: clone with only the exit signal behaves as fork; the child
    // runs on a copy of this stack.
    let r = unsafe {
        libc::syscall(
            libc::SYS_clone,
            libc::SIGCHLD as libc::c_ulong,
            0usize,
            0usize,
            0usize,
            0usize,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as libc::pid_t)
    }
}

/// Set every signal the gateway handles back to its default: the keeper
/// and the init are copies of the gateway and never `exec`, so a handler
/// the gateway installed (one that wakes its shutdown, say) would run in
/// them. Ignored signals stay ignored, as across `exec`.
///
/// # Safety
/// Plain system calls; only in a child before `exec`.
pub(crate) unsafe fn default_handlers() {
    // SAFETY: sigaction with zeroed structs on the stack.
    unsafe {
        for sig in 1..=libc::SIGRTMAX() {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) != 0 {
                continue;
            }
            if old.sa_sigaction != libc::SIG_DFL && old.sa_sigaction != libc::SIG_IGN {
                let mut new: libc::sigaction = std::mem::zeroed();
                new.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(sig, &new, std::ptr::null_mut());
            }
        }
    }
}

/// Close every descriptor but `keep`.
///
/// # Safety
/// Plain system calls; only in the keeper or the init.
unsafe fn close_all_but(keep: libc::c_int) {
    // SAFETY: close_range on this process's own table.
    unsafe {
        if keep > 0 {
            libc::syscall(libc::SYS_close_range, 0u32, (keep - 1) as u32, 0u32);
        }
        libc::syscall(libc::SYS_close_range, (keep + 1) as u32, u32::MAX, 0u32);
    }
}

/// Called right after `unshare(CLONE_NEWPID)`: forks the init. In the
/// keeper this never returns (it waits and ends as the program ended); in
/// the init it returns what the init needs.
///
/// # Safety
/// Only in the forked child before `exec`.
pub(crate) unsafe fn split() -> io::Result<Init> {
    let mut fds = [0; 2];
    // SAFETY (whole function): plain system calls on stack memory.
    unsafe {
        check(libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC))?;
        let [read, write] = fds;
        let init = raw_fork()?;
        if init != 0 {
            keeper(init, read, write);
        }
        libc::close(read);
        // The init dies with its keeper: a namespace whose keeper was
        // killed (timeout, /stop, the gateway's death) ends with it.
        check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL))?;
        // The keeper may have been killed before that: then no one reads
        // the pipe, and poll says so.
        let mut p = libc::pollfd {
            fd: write,
            events: libc::POLLOUT,
            revents: 0,
        };
        if libc::poll(&mut p, 1, 0) == 1 && p.revents & libc::POLLERR != 0 {
            libc::_exit(1);
        }
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
        // A session (and process group) of its own: `kill(0, …)`,
        // `setpriority(PRIO_PGRP, 0, …)` and `ioprio_set` on the group name
        // the caller's process group, which without this would be the
        // gateway's (an MCP server's spawn keeps it), across namespaces.
        check(libc::setsid())?;
        Ok(Init { status: write })
    }
}

/// The keeper: waits for the init's report and ends the same way.
///
/// # Safety
/// Only in the forked child; never returns.
unsafe fn keeper(init: libc::pid_t, read: libc::c_int, write: libc::c_int) -> ! {
    // SAFETY: plain system calls on stack memory.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
        // It may end by the program's signal: never with a core of the
        // gateway's memory.
        let none = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        libc::setrlimit(libc::RLIMIT_CORE, &none);
        libc::close(write);
        close_all_but(read);
        let mut status: libc::c_int = 0;
        let mut got = 0usize;
        while got < 4 {
            let r = libc::read(read, (&raw mut status).cast::<u8>().add(got).cast(), 4 - got);
            if r > 0 {
                got += r as usize;
            } else if r == 0 || *libc::__errno_location() != libc::EINTR {
                break;
            }
        }
        let mut own: libc::c_int = 0;
        while libc::waitpid(init, &mut own, 0) < 0 && *libc::__errno_location() == libc::EINTR {}
        // The program's status when the init reported it, else the init's.
        end_as(if got == 4 { status } else { own })
    }
}

/// End this process the way `status` says a process ended.
///
/// # Safety
/// Plain system calls; never returns.
unsafe fn end_as(status: libc::c_int) -> ! {
    // SAFETY: plain system calls.
    unsafe {
        if libc::WIFSIGNALED(status) {
            let sig = libc::WTERMSIG(status);
            let mut dfl: libc::sigaction = std::mem::zeroed();
            dfl.sa_sigaction = libc::SIG_DFL;
            libc::sigaction(sig, &dfl, std::ptr::null_mut());
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, sig);
            libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            libc::kill(libc::getpid(), sig);
            libc::_exit(128 + sig);
        }
        libc::_exit(libc::WEXITSTATUS(status))
    }
}

impl Init {
    /// Fork the program's process, which returns (and goes on to `exec`);
    /// the init itself only reaps until the program ends, reports its
    /// status and exits, taking the namespace with it.
    ///
    /// # Safety
    /// Only in the init, after it confined itself.
    pub(crate) unsafe fn start(self) -> io::Result<()> {
        // SAFETY: plain system calls on stack memory.
        unsafe {
            let program = raw_fork()?;
            if program == 0 {
                libc::close(self.status);
                return Ok(());
            }
            close_all_but(self.status);
            let mut status: libc::c_int = 0;
            loop {
                let mut st: libc::c_int = 0;
                let r = libc::waitpid(-1, &mut st, 0);
                if r == program {
                    status = st;
                    break;
                }
                if r < 0 && *libc::__errno_location() != libc::EINTR {
                    break;
                }
            }
            libc::write(self.status, (&raw const status).cast(), 4);
            libc::_exit(0)
        }
    }
}
