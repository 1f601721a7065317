//! `file_read`: read a text file inside the agent workspace.

use super::{ToolContext, ToolResult, builtin_tool};
use serde::Deserialize;
use tokio::io::AsyncReadExt;

pub(crate) struct FileRead;

#[derive(Deserialize)]
struct Args {
    path: String,
}

const MAX_READ: usize = 256 * 1024;

builtin_tool!(FileRead, "file_read", Args);

impl FileRead {
    async fn run(&self, args: Args, ctx: &ToolContext) -> ToolResult {
        let path = match ctx.in_workspace(&args.path) {
            Ok(p) => p,
            Err(refusal) => return refusal,
        };
        // Read at most the limit (and one byte more, to know there is more).
        let read = async {
            let file = tokio::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&path)
                .await?;
            let size = file.metadata().await?.len();
            let mut bytes = Vec::new();
            file.take(MAX_READ as u64 + 1).read_to_end(&mut bytes).await?;
            Ok::<_, std::io::Error>((bytes, size))
        };
        match read.await {
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
