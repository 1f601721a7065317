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
        // A name that LLVM made unique with a `.llvm.<number>` suffix gets
        // a new number whenever its code unit changes, so the list goes
        // stale with every edit; those are matched whatever their number,
        // by section (one per function) in a script that only adds to the
        // default layout.
        if let Some(script) = llvm_suffixed_script(&order) {
            println!("cargo:rustc-link-arg-bins=-Wl,-T,{}", script.display());
        }
    }
    println!("cargo:rerun-if-env-changed=SWITCHBOARD_NO_CODE_ORDER");
}

/// Writes `$OUT_DIR/code-order.ld`: an output section before `.text`
/// holding the listed functions whose names carry a `.llvm.` suffix, in
/// list order, matched by name with any suffix; `None` when there are none
/// or it cannot be written.
fn llvm_suffixed_script(order: &Path) -> Option<std::path::PathBuf> {
    let list = std::fs::read_to_string(order).ok()?;
    let mut seen = std::collections::HashSet::new();
    let patterns: Vec<String> = list
        .lines()
        .filter_map(|name| name.split_once(".llvm.").map(|(base, _)| base))
        // A linker-script pattern cannot hold these; such names are left out.
        .filter(|base| !base.contains(['"', '\\', '*', '?', '[', ' ']))
        .filter(|base| seen.insert(*base))
        .map(|base| format!("    *(\".text.{base}.llvm.*\")\n"))
        .collect();
    if patterns.is_empty() {
        return None;
    }
    let script = format!(
        "SECTIONS\n{{\n  .text.code_order : {{\n{}  }}\n}}\nINSERT BEFORE .text;\n",
        patterns.concat()
    );
    let path = Path::new(&std::env::var_os("OUT_DIR")?).join("code-order.ld");
    std::fs::write(&path, script).ok()?;
    Some(path)
}
