//! `switchboard`: the gateway binary. Everything lives in the gateway
//! library (`crates/gateway`) and the crates it wires together.

/// mimalloc: the runtime allocates and frees many small buffers from many
/// threads (JSON, HTTP, SQL); glibc's malloc showed ~15% of CPU there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// How long mimalloc keeps freed memory before giving it back to the
/// system, in ms. Its default (1 s, checked on later allocations only)
/// left a burst's memory held after the burst; 10 ms gave back ~30 MiB
/// after 1,000 people at once at no measurable cost (docs/performance.md).
const PURGE_DELAY_MS: std::ffi::c_long = 10;

/// `mi_option_purge_delay` in mimalloc's `mi_option_e` (mimalloc.h; the
/// Rust bindings have no constant for it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

fn main() -> std::process::ExitCode {
    // SAFETY: sets one of mimalloc's options to a value it documents;
    // called before any other thread starts.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS) };
    // Memory a burst used is given back when the runtime's threads run
    // out of work, not kept until the next burst.
    switchboard_gateway::allocator::set_park_hook(give_back_memory);
    // `switchboard bench ...` in builds with the benchmarks (feature `bench`).
    #[cfg(feature = "bench")]
    if std::env::args().nth(1).as_deref() == Some("bench") {
        return switchboard_bench::main();
    }
    switchboard_gateway::cli::main()
}

/// A runtime thread ran out of work: free its heap's empty pages and give
/// the freed memory back to the system now. Without it, what the threads
/// freed stayed theirs while they slept: 48 MiB resident after the bench's
/// bursts, 35 MiB with it, at no measurable cost per message
/// (docs/performance.md).
fn give_back_memory() {
    // SAFETY: mimalloc's collect of the calling thread's heap; no pointers.
    unsafe { libmimalloc_sys::mi_collect(true) };
}
