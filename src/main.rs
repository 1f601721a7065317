//! `switchboard`: the gateway binary. Everything lives in the gateway
//! library (`crates/gateway`) and the crates it wires together.

/// mimalloc: the runtime allocates and frees many small buffers from many
/// threads (JSON, HTTP, SQL); glibc's malloc showed ~15% of CPU there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    // `switchboard bench ...` in builds with the benchmarks (feature `bench`).
    #[cfg(feature = "bench")]
    if std::env::args().nth(1).as_deref() == Some("bench") {
        return switchboard_bench::main();
    }
    switchboard_gateway::cli::main()
}
