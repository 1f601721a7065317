//! `file_read`: read a text file inside the agent workspace.
//!
//! The path is checked first (a clear refusal); the read itself happens on
//! a thread the kernel confines to the workspace, so a link made since by
//! any program leads nowhere (docs/security.md).

use super::{ToolContext, ToolResult, builtin_tool};
use serde::Deserialize;
use std::io::Read;
use switchboard_sandbox::fs::Access;

pub(crate) struct FileRead;

#[derive(Deserialize)]
struct Args {
    path: String,
}

const MAX_READ: usize = 256 * 1024;

builtin_tool!(FileRead, "file_read", Args);

/// At most `limit` bytes of the file at `path` (and one more, to know there
/// is more), and its size; with `whole`, nothing is read from a file
/// whose size is over the limit.
pub(crate) fn read_capped(path: &std::path::Path, limit: u64, whole: bool) -> std::io::Result<(Vec<u8>, u64)> {
    let file = switchboard_sandbox::fs::open_regular(path, std::fs::OpenOptions::new().read(true))?;
    let meta = file.metadata()?;
    if whole && meta.len() > limit {
        return Ok((Vec::new(), meta.len()));
    }
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes)?;
    Ok((bytes, meta.len()))
}

impl FileRead {
    async fn run(&self, args: Args, ctx: &ToolContext) -> ToolResult {
        let path = match ctx.in_workspace(&args.path) {
            Ok(p) => p,
            Err(refusal) => return refusal,
        };
        let read = ctx
            .confined(Access::Read, move || read_capped(&path, MAX_READ as u64, false))
            .await;
        match read {
            Ok((mut bytes, size)) => {
                let cut = bytes.len() > MAX_READ;
                bytes.truncate(MAX_READ);
                let mut text = String::from_utf8_lossy(&bytes).into_owned();
                if cut {
                    text.push_str(&format!(
                        "\n[truncated: the file is {size} bytes; the first {MAX_READ} are shown]"
                    ));
                }
                ToolResult::ok(text)
            }
            Err(e) => ToolResult::fail(format!("cannot read '{}': {e}", args.path)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::read_capped;

    #[test]
    fn a_fifo_or_a_link_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("f");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(read_capped(&fifo, 10, false).is_err());
        std::os::unix::fs::symlink("/etc/hostname", dir.path().join("l")).unwrap();
        assert!(read_capped(&dir.path().join("l"), 10, false).is_err());
        std::fs::write(dir.path().join("big"), vec![b'x'; 100]).unwrap();
        let (bytes, size) = read_capped(&dir.path().join("big"), 10, true).unwrap();
        assert!(
            bytes.is_empty() && size == 100,
            "an oversized file is not read when whole"
        );
    }
}
