//! Files under a skills folder, opened one path component at a time from
//! the folder's own descriptor with `O_NOFOLLOW`: no link is followed
//! anywhere on the way, and a folder swapped for a link (by the agent that
//! owns the workspace, between two turns or two calls) is refused instead
//! of read through. The confined thread the reads run on is a second wall.

use std::ffi::CString;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path};

/// A folder opened without following a link, and its (device, inode).
pub(crate) fn open_dir(path: &Path) -> io::Result<(OwnedFd, (u64, u64))> {
    let c = CString::new(path.as_os_str().as_bytes()).map_err(io::Error::other)?;
    // SAFETY: a NUL-terminated path; the descriptor is owned below.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and is owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let id = identity(&fd)?;
    Ok((fd, id))
}

/// Device and inode of an open file.
pub(crate) fn identity(fd: &OwnedFd) -> io::Result<(u64, u64)> {
    let meta = std::fs::File::from(fd.try_clone()?).metadata()?;
    Ok((meta.dev(), meta.ino()))
}

/// `rel` under `dir`, each component opened with `O_NOFOLLOW` (only
/// normal names: no `..`, no absolute path); the last as a folder when
/// `folder`, else as a regular file for reading.
pub(crate) fn open_under(dir: &OwnedFd, rel: &Path, folder: bool) -> io::Result<OwnedFd> {
    let parts: Vec<&std::ffi::OsStr> = rel
        .components()
        .map(|c| match c {
            Component::Normal(name) => Ok(name),
            _ => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "only plain names inside the folder",
            )),
        })
        .collect::<io::Result<_>>()?;
    let mut at = dir.try_clone()?;
    for (i, name) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let flags = if last && !folder {
            libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC
        } else {
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC
        };
        let c = CString::new(name.as_bytes()).map_err(io::Error::other)?;
        // SAFETY: `at` is an open folder and `c` a NUL-terminated name.
        let fd = unsafe { libc::openat(at.as_raw_fd(), c.as_ptr(), flags) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: just opened, owned here.
        at = unsafe { OwnedFd::from_raw_fd(fd) };
    }
    Ok(at)
}

/// At most `limit` bytes of the regular file `rel` under `dir`.
pub(crate) fn read_text(dir: &OwnedFd, rel: &Path, limit: u64) -> io::Result<String> {
    let file = std::fs::File::from(open_under(dir, rel, false)?);
    if !file.metadata()?.is_file() {
        return Err(io::Error::other("not a regular file"));
    }
    let mut bytes = Vec::new();
    file.take(limit).read_to_end(&mut bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The entries of an open folder: name, and whether each is a folder (a
/// link is neither a folder nor a file here).
pub(crate) fn entries(dir: &OwnedFd) -> io::Result<Vec<(String, Kind)>> {
    // The descriptor's own folder, whatever its path has become since.
    let listing = std::fs::read_dir(format!("/proc/self/fd/{}", dir.as_raw_fd()))?;
    let mut out = Vec::new();
    for e in listing.flatten() {
        let kind = match e.file_type() {
            Ok(t) if t.is_dir() => Kind::Folder,
            Ok(t) if t.is_file() => Kind::File,
            _ => Kind::Other,
        };
        out.push((e.file_name().to_string_lossy().into_owned(), kind));
    }
    out.sort();
    Ok(out)
}

/// What an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Kind {
    Folder,
    File,
    /// A link, a FIFO, a device…: never opened.
    Other,
}
