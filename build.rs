//! Link settings of the `switchboard` binary (docs/performance.md, "Where
//! the memory goes").

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        // Relative relocations packed (DT_RELR: glibc 2.36, binutils 2.38):
        // the position-independent binary's 110,000 relocations were 2.6 MB
        // that the loader read at every start; packed they are a few KB.
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
