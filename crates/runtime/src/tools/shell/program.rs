//! Which program a command runs, and the environment it runs in.
//!
//! A program is named, never given as a path (`./ls` or `/tmp/x/ls` would
//! pass an allowlist check on `ls` and run something else), and looked up
//! in a fixed search path rather than the gateway's own `PATH`. It runs with
//! an empty environment plus a few fixed variables; `HOME` points at a
//! folder that does not exist, so no dotfile in the workspace (such as a
//! `.gitconfig` written with `file_write`) configures the program.

use std::path::PathBuf;

/// Where programs are looked up, in order.
pub(crate) const SEARCH_PATH: &[&str] = &["/usr/local/bin", "/usr/bin", "/bin"];

/// `HOME` for commands: absent on purpose.
const HOME: &str = "/nonexistent";

/// The executable `name` stands for, or why it cannot run.
pub(crate) fn resolve(name: &str) -> Result<PathBuf, String> {
    if name.contains('/') {
        return Err(format!(
            "'{name}' is a path: commands name a program by name only (e.g. 'ls'), found in {}",
            SEARCH_PATH.join(":")
        ));
    }
    if name.is_empty() || name.starts_with('.') {
        return Err(format!("'{name}' is not a program name"));
    }
    for dir in SEARCH_PATH {
        let candidate = std::path::Path::new(dir).join(name);
        if is_executable(&candidate) {
            return Ok(candidate);
        }
    }
    Err(format!("program '{name}' was not found in {}", SEARCH_PATH.join(":")))
}

fn is_executable(path: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The environment every command working in `workspace` gets.
pub(crate) fn environment(program: &str, workspace: &std::path::Path) -> Vec<(&'static str, String)> {
    let mut env = vec![
        ("PATH", SEARCH_PATH.join(":")),
        ("HOME", HOME.to_string()),
        ("LANG", "C.UTF-8".to_string()),
    ];
    if program == "git" {
        // No system or user configuration, no prompts, no pager or editor.
        env.extend([
            ("GIT_CONFIG_NOSYSTEM", "1".to_string()),
            ("GIT_CONFIG_GLOBAL", "/dev/null".to_string()),
            ("GIT_TERMINAL_PROMPT", "0".to_string()),
            ("GIT_PAGER", "cat".to_string()),
            ("GIT_EDITOR", "false".to_string()),
            ("GIT_SEQUENCE_EDITOR", "false".to_string()),
            ("GIT_ASKPASS", "false".to_string()),
            // Repository discovery stops at the workspace: a workspace
            // inside another checkout never reaches the outer repository.
            (
                "GIT_CEILING_DIRECTORIES",
                workspace.parent().unwrap_or(workspace).to_string_lossy().into_owned(),
            ),
        ]);
    }
    env
}

/// Options put before the caller's own on every git command: hooks,
/// fsmonitor and the ext:: transport off, and no bare repository found
/// by discovery (a hand-written one could carry any configuration),
/// whatever a repository says.
pub(crate) const GIT_PREFIX: &[&str] = &[
    "-c",
    "safe.bareRepository=explicit",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "protocol.ext.allow=never",
];

#[cfg(test)]
mod tests {
    use super::resolve;

    #[test]
    fn programs_by_name_only() {
        assert!(resolve("ls").unwrap().is_absolute());
        for bad in ["./ls", "/bin/ls", "/tmp/x/ls", "sub/ls", "", ".."] {
            assert!(resolve(bad).is_err(), "{bad}");
        }
        assert!(resolve("no-such-program-here").unwrap_err().contains("not found"));
    }
}
