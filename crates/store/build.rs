//! Rebuild the store when a migration changes (they are embedded), and
//! name this build: the package version, and the commit it was built from
//! when built from a git checkout (`0.1.0+1a2b3c4d5e6f`), so two builds of
//! one version are told apart in `switchboard status` and the schema
//! records (docs/operations.md, "Upgrades").

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    println!("cargo:rerun-if-changed=../../migrations");
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    let build = match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(commit) if !commit.is_empty() => format!("{version}+{commit}"),
        _ => version,
    };
    println!("cargo:rustc-env=SWITCHBOARD_BUILD={build}");
    // A new commit names the build anew (only paths that exist: a missing
    // one would rebuild the store every time).
    let (Some(dir), Some(common)) = (
        git(&["rev-parse", "--git-dir"]),
        git(&["rev-parse", "--git-common-dir"]),
    ) else {
        return;
    };
    for path in [
        format!("{dir}/HEAD"),
        format!("{common}/refs/heads"),
        format!("{common}/packed-refs"),
    ] {
        if std::path::Path::new(&path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
}
