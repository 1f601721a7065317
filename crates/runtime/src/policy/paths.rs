//! Keeping file and shell paths inside the agent's workspace.

use std::path::{Component, Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("path '{0}' is outside the agent workspace; use a path relative to the workspace")]
    OutsideWorkspace(String),
    #[error("path '{0}' is forbidden")]
    Forbidden(String),
}

/// Resolve `requested` (relative to `workspace`, or absolute) to a path that
/// is guaranteed to stay inside `workspace`, following existing symlinks.
pub fn resolve_in_workspace(workspace: &Path, requested: &str, forbidden: &[String]) -> Result<PathBuf, PathError> {
    let expanded = expand_home(requested);
    for f in forbidden {
        let f = expand_home(f);
        if expanded == f || expanded.starts_with(&format!("{}/", f.trim_end_matches('/'))) {
            return Err(PathError::Forbidden(requested.to_string()));
        }
    }
    let root = workspace.canonicalize().unwrap_or_else(|_| workspace.to_path_buf());
    let candidate = if Path::new(&expanded).is_absolute() {
        PathBuf::from(&expanded)
    } else {
        root.join(&expanded)
    };
    // Normalize lexically, then canonicalize the longest existing prefix so
    // symlinks that point outside are caught.
    let mut normal = PathBuf::new();
    for c in candidate.components() {
        match c {
            Component::ParentDir => {
                normal.pop();
            }
            Component::CurDir => {}
            other => normal.push(other),
        }
    }
    let mut existing = normal.clone();
    let mut rest = Vec::new();
    while !existing.exists() {
        match (existing.file_name().map(|n| n.to_os_string()), existing.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => break,
        }
    }
    let mut resolved = existing.canonicalize().unwrap_or(existing);
    for part in rest.into_iter().rev() {
        resolved.push(part);
    }
    if resolved.starts_with(&root) {
        Ok(resolved)
    } else {
        Err(PathError::OutsideWorkspace(requested.to_string()))
    }
}

fn expand_home(p: &str) -> String {
    match (p.strip_prefix("~/"), std::env::var("HOME")) {
        (Some(rest), Ok(home)) => format!("{home}/{rest}"),
        _ => p.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confinement() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        std::fs::create_dir(ws.join("sub")).unwrap();
        let none: Vec<String> = vec![];
        assert!(resolve_in_workspace(ws, "notes.txt", &none).is_ok());
        assert!(resolve_in_workspace(ws, "sub/../a/b.txt", &none).is_ok());
        assert!(resolve_in_workspace(ws, "../escape.txt", &none).is_err());
        assert!(resolve_in_workspace(ws, "/tmp/elsewhere", &none).is_err());
        std::os::unix::fs::symlink("/tmp", ws.join("link")).unwrap();
        assert!(resolve_in_workspace(ws, "link/x", &none).is_err());
        let inside = format!("{}/sub/x", ws.display());
        assert!(resolve_in_workspace(ws, &inside, &none).is_ok());
        assert_eq!(
            resolve_in_workspace(ws, "/etc/passwd", &["/etc".into()]),
            Err(PathError::Forbidden("/etc/passwd".into()))
        );
    }
}
