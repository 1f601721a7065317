//! Keeping file and shell paths inside the agent's workspace.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// Why a path was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// It leads outside the workspace.
    #[error("path '{0}' is outside the agent workspace; use a path relative to the workspace")]
    OutsideWorkspace(String),
    /// It is a forbidden path.
    #[error("path '{0}' is forbidden")]
    Forbidden(String),
    #[error(
        "path '{0}' is inside a repository's .git folder, which tools may not touch (its configuration can name programs to run); use git commands instead"
    )]
    /// It is inside `.git`.
    GitMetadata(String),
    /// Too many symbolic links to follow.
    #[error("path '{0}' goes through too many symbolic links")]
    TooManyLinks(String),
}

/// Symbolic links followed in one path before giving up (as the kernel does).
const MAX_LINKS: u32 = 40;

/// Resolve `requested` (relative to `workspace`, or absolute) to a path that
/// is guaranteed to stay inside `workspace`. The path is resolved as the
/// kernel would: component by component, following every symbolic link —
/// also one whose target does not exist yet, so a write cannot go through a
/// dangling link to outside — and applying `..` to where a link led, not
/// to the text. Parts that do not exist yet are taken as written.
pub fn resolve_in_workspace(workspace: &Path, requested: &str, forbidden: &[String]) -> Result<PathBuf, PathError> {
    let expanded = expand_home(requested);
    if is_forbidden(Path::new(&expanded), forbidden) {
        return Err(PathError::Forbidden(requested.to_string()));
    }
    let root = workspace.canonicalize().unwrap_or_else(|_| workspace.to_path_buf());
    let mut resolved = if Path::new(&expanded).is_absolute() {
        PathBuf::from("/")
    } else {
        root.clone()
    };
    let mut pending: Vec<OsString> = parts(Path::new(&expanded));
    pending.reverse();
    let mut links = 0;
    while let Some(part) = pending.pop() {
        if part == "/" {
            resolved = PathBuf::from("/");
            continue;
        }
        if part == "." {
            continue;
        }
        if part == ".." {
            resolved.pop();
            continue;
        }
        let next = resolved.join(&part);
        match std::fs::symlink_metadata(&next) {
            Ok(m) if m.file_type().is_symlink() => {
                links += 1;
                if links > MAX_LINKS {
                    return Err(PathError::TooManyLinks(requested.to_string()));
                }
                let target =
                    std::fs::read_link(&next).map_err(|_| PathError::OutsideWorkspace(requested.to_string()))?;
                // The link's own parts come next, then what followed it.
                let mut target_parts = parts(&target);
                target_parts.reverse();
                pending.extend(target_parts);
            }
            _ => resolved = next,
        }
    }
    let Ok(inside) = resolved.strip_prefix(&root) else {
        return Err(PathError::OutsideWorkspace(requested.to_string()));
    };
    if inside.components().any(|c| c.as_os_str() == ".git") {
        return Err(PathError::GitMetadata(requested.to_string()));
    }
    if is_forbidden(&resolved, forbidden) {
        return Err(PathError::Forbidden(requested.to_string()));
    }
    Ok(resolved)
}

/// A path's parts, with `/` standing for the root.
fn parts(path: &Path) -> Vec<OsString> {
    path.components()
        .map(|c| match c {
            Component::RootDir | Component::Prefix(_) => OsString::from("/"),
            Component::CurDir => OsString::from("."),
            Component::ParentDir => OsString::from(".."),
            Component::Normal(n) => n.to_os_string(),
        })
        .collect()
}

fn is_forbidden(path: &Path, forbidden: &[String]) -> bool {
    forbidden.iter().any(|f| path.starts_with(expand_home(f)))
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

    #[test]
    fn links_are_followed_as_the_kernel_does() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let ws = dir.path();
        let none: Vec<String> = vec![];
        std::fs::create_dir(ws.join("sub")).unwrap();
        // A dangling link to outside: writing through it would create the target.
        let target = outside.path().join("not-yet");
        std::os::unix::fs::symlink(&target, ws.join("dangling")).unwrap();
        assert!(matches!(
            resolve_in_workspace(ws, "dangling", &none),
            Err(PathError::OutsideWorkspace(_))
        ));
        // `..` applies to where a link led: out/../x is outside/../x.
        std::os::unix::fs::symlink(outside.path(), ws.join("out")).unwrap();
        assert!(resolve_in_workspace(ws, "out/../x", &none).is_err());
        // A relative link that climbs out.
        std::os::unix::fs::symlink("../..", ws.join("sub/up")).unwrap();
        assert!(resolve_in_workspace(ws, "sub/up/etc", &none).is_err());
        // A link that stays inside is fine.
        std::os::unix::fs::symlink("sub", ws.join("alias")).unwrap();
        assert_eq!(
            resolve_in_workspace(ws, "alias/f.txt", &none).unwrap(),
            ws.canonicalize().unwrap().join("sub/f.txt")
        );
        // Loops end with an error instead of spinning.
        std::os::unix::fs::symlink("loop", ws.join("loop")).unwrap();
        assert!(matches!(
            resolve_in_workspace(ws, "loop", &none),
            Err(PathError::TooManyLinks(_))
        ));
        // The .git folder is out of reach, however it is named.
        for p in [".git/config", "sub/../.git/hooks/x", "a/.git", ".git"] {
            assert!(
                matches!(resolve_in_workspace(ws, p, &none), Err(PathError::GitMetadata(_))),
                "{p}"
            );
        }
        assert!(resolve_in_workspace(ws, ".gitignore", &none).is_ok());
        // Forbidden places are refused after resolving too.
        std::os::unix::fs::symlink("/etc", ws.join("etc")).unwrap();
        assert!(resolve_in_workspace(ws, "etc/passwd", &["/etc".into()]).is_err());
    }
}
