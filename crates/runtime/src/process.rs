//! Process-level settings for a long-running gateway (Linux; elsewhere
//! these do nothing).

/// Turn transparent huge pages off for this process.
///
/// With THP the allocator's arenas are backed by 2 MiB pages: the first
/// touch of any byte makes the kernel zero a whole 2 MiB page, so a burst
/// of new work (a thousand delegations at once) spends much of its CPU
/// zeroing memory it barely uses, and latency jumps. Databases and caches
/// (Redis, MongoDB) advise the same. Measured with the delegation
/// benchmark: page-fault time went from ~39% to 1-8% of CPU samples.
pub fn disable_transparent_huge_pages() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: prctl with PR_SET_THP_DISABLE takes plain integers and
        // only sets a flag on this process.
        let r = unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) };
        if r != 0 {
            tracing::debug!(error = %std::io::Error::last_os_error(), "cannot turn transparent huge pages off");
        }
    }
}

/// The most open files this process asks for when it raises its limit.
const OPEN_FILES_WANTED: u64 = 65_536;

/// Raise this process's soft limit on open files to its hard limit (at
/// most [`OPEN_FILES_WANTED`]).
///
/// Every conversation in flight holds a connection to its model server
/// and one to its chat platform, and up to 512 of each stay open between
/// requests: a burst of a thousand people needs well over the 1,024 files
/// most systems allow a process by default, and past it connections and
/// the database fail with "too many open files". The hard limit is what
/// the administrator allows (systemd: 524,288); tools the gateway runs
/// get their own, lower, limit from the sandbox.
pub fn raise_open_file_limit() {
    #[cfg(target_os = "linux")]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes one plain struct that outlives the call.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
            return;
        }
        let wanted = limit.rlim_max.min(OPEN_FILES_WANTED);
        if limit.rlim_cur >= wanted {
            return;
        }
        limit.rlim_cur = wanted;
        // SAFETY: setrlimit reads one plain struct that outlives the call.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) } != 0 {
            tracing::debug!(error = %std::io::Error::last_os_error(), "cannot raise the open file limit");
        }
    }
}

/// Let the calling thread run only when no other thread wants the CPU
/// (`SCHED_IDLE`), for background bookkeeping that must never take CPU
/// from request handling.
pub fn run_thread_when_idle() {
    #[cfg(target_os = "linux")]
    {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: pid 0 names the calling thread; the parameter is a plain
        // struct that outlives the call.
        let r = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
        if r != 0 {
            tracing::debug!(error = %std::io::Error::last_os_error(), "cannot lower the thread priority");
        }
    }
}
