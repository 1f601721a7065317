//! `file_read`: read a text file inside the agent workspace.
//!
//! The path is checked first (a clear refusal); the read itself happens on
//! a thread the kernel confines to the workspace, so a link made since by
//! any program leads nowhere (docs/security.md).

use super::{ToolContext, ToolResult, builtin_tool};
use serde::Deserialize;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
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
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a file"));
    }
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
