//! Giving memory back after work: the binary chooses the allocator and
//! may register what to call when a runtime thread runs out of work
//! (`set_park_hook`); the library never names an allocator.

use std::sync::OnceLock;

static PARK_HOOK: OnceLock<fn()> = OnceLock::new();

/// Call `hook` on a runtime thread each time it runs out of work and is
/// about to sleep (before the runtime starts; a second call is ignored).
pub fn set_park_hook(hook: fn()) {
    let _ = PARK_HOOK.set(hook);
}

/// The registered hook, if any.
pub(crate) fn park_hook() -> Option<fn()> {
    PARK_HOOK.get().copied()
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    static PARKS: AtomicUsize = AtomicUsize::new(0);

    fn count_park() {
        PARKS.fetch_add(1, Ordering::SeqCst);
    }

    /// The gateway's runtime calls the registered hook when its threads
    /// run out of work.
    #[test]
    fn the_runtime_calls_the_hook_when_a_thread_runs_out_of_work() {
        super::set_park_hook(count_park);
        let code = crate::cli::run_to_exit(async {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            Ok(std::process::ExitCode::SUCCESS)
        });
        assert_eq!(code, std::process::ExitCode::SUCCESS);
        assert!(PARKS.load(Ordering::SeqCst) > 0, "no thread parked through the hook");
    }
}
