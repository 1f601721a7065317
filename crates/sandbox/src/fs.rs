//! File work confined to a workspace: the closure runs on a short-lived
//! thread that first restricts itself with Landlock to the workspace (read,
//! or read and write) and then ends, so a link any program made — to
//! `/etc`, the gateway's data or another agent's workspace — leads the
//! kernel nowhere. A Landlock domain is per thread: the rest of the
//! gateway is untouched.
//!
//! On a kernel without Landlock the closure runs unconfined (the callers'
//! path checks stand alone; commands, which could make links, are refused
//! there unless the operator opted out).

use crate::support::Support;
use std::io;
use std::path::{Path, PathBuf};

/// What the confined thread may do in the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Read files and list folders.
    Read,
    /// Read, create, write and remove.
    ReadWrite,
}

/// Open `path` with `options`, following no link and never blocking on a
/// FIFO or device: only a regular file is returned. For the work done on
/// a confined thread (a link or FIFO any program left is refused).
pub fn open_regular(path: &Path, options: &mut std::fs::OpenOptions) -> io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::other("not a regular file"));
    }
    Ok(file)
}

/// Run `work` on a thread confined to `workspace` with `access`, and wait
/// for it without blocking the async runtime.
pub async fn confined<T, F>(workspace: &Path, access: Access, work: F) -> io::Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> io::Result<T> + Send + 'static,
{
    let workspace = workspace.to_path_buf();
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new().name("confined-fs".into()).spawn(move || {
        let _ = tx.send(run(&workspace, access, work));
    })?;
    rx.await
        .unwrap_or_else(|_| Err(io::Error::other("the confined file thread ended without an answer")))
}

/// The same, blocking the calling thread (for code that is not async).
pub fn confined_blocking<T, F>(workspace: &Path, access: Access, work: F) -> io::Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> io::Result<T> + Send + 'static,
{
    let workspace: PathBuf = workspace.to_path_buf();
    std::thread::Builder::new()
        .name("confined-fs".into())
        .spawn(move || run(&workspace, access, work))?
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("the confined file thread panicked")))
}

fn run<T>(workspace: &Path, access: Access, work: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
    if Support::get().can_confine() {
        let ruleset = crate::rulesets::files(workspace, access == Access::ReadWrite).map_err(io::Error::other)?;
        ruleset.restrict_self().map_err(io::Error::other)?;
    }
    work()
}
