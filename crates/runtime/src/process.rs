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
