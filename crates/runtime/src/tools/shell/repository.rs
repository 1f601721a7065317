//! Which repository a git command would use: only one whose metadata is a
//! `.git` folder in the workspace. A `.git` *file* (`gitdir: elsewhere`,
//! as `git init --separate-git-dir` writes) may point only at a `.git`
//! folder inside the workspace (worktrees and submodules do); otherwise its
//! configuration could sit in any folder the file tools can write. Bare
//! repositories are not used unless named (`safe.bareRepository=explicit`,
//! set on every git command). The kernel confines git whatever this finds;
//! this is the clearer refusal.

use std::path::{Component, Path};

/// Refuse a git command working in `base` (relative to `workspace`) whose
/// repository is not at `<workspace>/**/.git`.
pub(crate) fn check(workspace: &Path, base: &Path) -> Result<(), String> {
    let root = workspace.canonicalize().unwrap_or_else(|_| workspace.to_path_buf());
    let start = root.join(base);
    let mut dir = start.canonicalize().unwrap_or(start);
    loop {
        if !dir.starts_with(&root) {
            return Ok(());
        }
        let dot_git = dir.join(".git");
        match std::fs::symlink_metadata(&dot_git) {
            Ok(m) if m.is_dir() => return Ok(()),
            Ok(m) if m.is_file() => return gitfile(&root, &dir, &dot_git),
            Ok(_) => return Err(refusal(&root, &dot_git, "is a link")),
            Err(_) => {}
        }
        if !dir.pop() {
            return Ok(());
        }
    }
}

/// A `.git` file: its `gitdir:` must lead to a `.git` folder in the workspace.
fn gitfile(root: &Path, dir: &Path, dot_git: &Path) -> Result<(), String> {
    let text = read_small(root, dot_git).map_err(|e| format!("cannot read {}: {e}", dot_git.display()))?;
    let Some(target) = text.lines().find_map(|l| l.strip_prefix("gitdir:")).map(str::trim) else {
        return Err(refusal(root, dot_git, "is a file that names no repository"));
    };
    let target = dir.join(target);
    let resolved = target.canonicalize().unwrap_or(target);
    let inside = resolved.strip_prefix(root).ok();
    let in_dot_git = inside.is_some_and(|p| p.components().any(|c| c == Component::Normal(".git".as_ref())));
    if in_dot_git {
        Ok(())
    } else {
        Err(refusal(
            root,
            dot_git,
            "points at a repository outside a .git folder of the workspace",
        ))
    }
}

/// The first 4 KiB of a regular file, read on a thread confined to the
/// workspace, following no link and never blocking on a FIFO.
fn read_small(root: &Path, path: &Path) -> std::io::Result<String> {
    let path = path.to_path_buf();
    switchboard_sandbox::fs::confined_blocking(root, switchboard_sandbox::fs::Access::Read, move || {
        let (bytes, _) = crate::tools::file_read::read_capped(&path, 4096, false)?;
        Ok(String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]).into_owned())
    })
}

fn refusal(root: &Path, dot_git: &Path, why: &str) -> String {
    let shown = dot_git.strip_prefix(root).unwrap_or(dot_git);
    format!(
        "git is refused here: {} {why}; repositories must live in a .git folder inside the workspace (git init, git clone)",
        shown.display()
    )
}

#[cfg(test)]
mod tests {
    use super::check;
    use std::path::Path;

    #[test]
    fn only_repositories_in_dot_git_folders() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        std::fs::create_dir_all(ws.join("ok/.git")).unwrap();
        std::fs::create_dir_all(ws.join("ok/sub")).unwrap();
        assert!(check(ws, Path::new("ok/sub")).is_ok());
        assert!(check(ws, Path::new("")).is_ok(), "no repository at all");
        // A separate git dir, as `init --separate-git-dir=gd wt` makes.
        std::fs::create_dir_all(ws.join("gd")).unwrap();
        std::fs::create_dir_all(ws.join("wt")).unwrap();
        std::fs::write(ws.join("wt/.git"), "gitdir: ../gd\n").unwrap();
        let refusal = check(ws, Path::new("wt")).unwrap_err();
        assert!(refusal.contains("wt/.git points at a repository outside"), "{refusal}");
        // A worktree's file pointing into the main repository's .git is fine.
        std::fs::create_dir_all(ws.join("ok/.git/worktrees/w")).unwrap();
        std::fs::create_dir_all(ws.join("w")).unwrap();
        std::fs::write(ws.join("w/.git"), "gitdir: ../ok/.git/worktrees/w\n").unwrap();
        assert!(check(ws, Path::new("w")).is_ok());
        // A link named .git.
        std::fs::create_dir_all(ws.join("l")).unwrap();
        std::os::unix::fs::symlink("/tmp", ws.join("l/.git")).unwrap();
        assert!(check(ws, Path::new("l")).unwrap_err().contains("is a link"));
    }
}
