//! Link settings of the `switchboard` binary (docs/performance.md, "Where
//! the memory goes").

use std::path::Path;

/// The functions start-up, idling and answering run, in the order they
/// first ran (scripts/code-order.sh writes it).
const CODE_ORDER: &str = "scripts/code-order.txt";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed={CODE_ORDER}");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    // x86_64 Linux with glibc: the target Rust links with its own LLD.
    if os != "linux" || env != "gnu" || arch != "x86_64" {
        return;
    }
    // Relative relocations packed (DT_RELR: glibc 2.36, binutils 2.38 or
    // LLD): the position-independent binary's 110,000 relocations were
    // 2.6 MB that the loader read at every start; packed they are 32 KB.
    println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    // The code a running gateway uses, placed together at the start of
    // the binary: the kernel maps a binary's pages 64 KiB at a time around
    // each one used, so code spread over the whole 70 MB kept ~20 MiB
    // resident; together it is a few MiB. Release builds only (names in
    // other profiles differ); a name no longer in the binary is skipped.
    // SWITCHBOARD_NO_CODE_ORDER=1 leaves it out (a linker other than LLD).
    let profile = std::env::var("PROFILE").unwrap_or_default();
    let order = Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default()).join(CODE_ORDER);
    if profile == "release" && order.is_file() && std::env::var_os("SWITCHBOARD_NO_CODE_ORDER").is_none() {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
    println!("cargo:rerun-if-env-changed=SWITCHBOARD_NO_CODE_ORDER");
}
