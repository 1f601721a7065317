//! The words of a command that may name files, checked against the
//! workspace after resolving symbolic links: plain words (`notes.txt`,
//! `link/../x`), option values (`--file=/etc/x`, `-f/etc/x`) and
//! `file://` URLs.

use crate::policy::resolve_in_workspace;
use std::path::Path;

/// The file names a word may carry.
fn candidates(word: &str) -> Vec<&str> {
    let mut out = Vec::new();
    if let Some(i) = word.find("file://") {
        out.push(&word[i + "file://".len()..]);
    }
    if let Some(long) = word.strip_prefix("--") {
        if let Some((_, value)) = long.split_once('=') {
            out.push(value);
        }
    } else if let Some(short) = word.strip_prefix('-') {
        // `-f/etc/x`, `-I./inc`: a one-letter option with its value attached.
        if short.len() > 1 && short.is_char_boundary(1) {
            out.push(&short[1..]);
        }
        if let Some((_, value)) = short.split_once('=') {
            out.push(value);
        }
    } else {
        out.push(word);
        if let Some((_, value)) = word.split_once('=') {
            out.push(value);
        }
    }
    out.retain(|c| !c.is_empty());
    out
}

/// Refuse a command whose words reach outside the workspace (or into a
/// forbidden place or a `.git` folder). Relative words are taken from
/// `base`, where the program works (relative to the workspace).
pub(crate) fn check(words: &[String], workspace: &Path, base: &Path, forbidden: &[String]) -> Result<(), String> {
    for word in words {
        for candidate in candidates(word) {
            let from_base = base.join(candidate);
            resolve_in_workspace(workspace, &from_base.to_string_lossy(), forbidden).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(ws: &Path, cmd: &str) -> bool {
        check(&shell_words::split(cmd).unwrap(), ws, Path::new(""), &[]).is_ok()
    }

    #[test]
    fn every_word_that_may_be_a_path_is_checked() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        std::os::unix::fs::symlink("/", ws.join("root")).unwrap();
        for bad in [
            "/etc/passwd",
            "-f/etc/passwd",
            "--file=/etc/passwd",
            "file:///etc/passwd",
            "root",
            "root/etc",
            "x/../../y",
            "out=/tmp/x",
            ".git/config",
        ] {
            assert!(!ok(ws, bad), "{bad}");
        }
        // Relative to where the program works: `-C s` then `up/x` is `s/up/x`.
        std::fs::create_dir(ws.join("s")).unwrap();
        std::os::unix::fs::symlink("/tmp", ws.join("s/up")).unwrap();
        assert!(check(&["up/x".to_string()], ws, Path::new("s"), &[]).is_err());
        assert!(check(&["up/x".to_string()], ws, Path::new(""), &[]).is_ok());
        for good in [
            "notes.txt",
            "-la",
            "--oneline",
            "-n5",
            "sub/dir/x",
            "HEAD~1",
            "--format=%H %s",
        ] {
            assert!(ok(ws, good), "{good}");
        }
    }
}
