//! `file_write`: write (or append to) a file inside the agent workspace.

use super::{ToolContext, ToolResult, builtin_tool};
use serde::Deserialize;
use tokio::io::AsyncWriteExt;

pub(crate) struct FileWrite;

#[derive(Deserialize)]
struct Args {
    path: String,
    content: String,
    #[serde(default)]
    append: bool,
}

builtin_tool!(FileWrite, "file_write", Args);

impl FileWrite {
    async fn run(&self, args: Args, ctx: &ToolContext) -> ToolResult {
        let path = match ctx.in_workspace(&args.path) {
            Ok(p) => p,
            Err(refusal) => return refusal,
        };
        if let Some(parent) = path.parent()
            && let Err(e) = tokio::fs::create_dir_all(parent).await
        {
            return ToolResult::fail(format!("cannot create folders for '{}': {e}", args.path));
        }
        let result = async {
            let mut f = tokio::fs::OpenOptions::new()
                .create(true)
                .write(true)
                .append(args.append)
                .truncate(!args.append)
                // The path was resolved link by link; a link put in its
                // place since is not followed.
                .custom_flags(libc::O_NOFOLLOW)
                .open(&path)
                .await?;
            f.write_all(args.content.as_bytes()).await?;
            f.flush().await
        }
        .await;
        match result {
            Ok(()) => ToolResult::ok(format!("wrote {} bytes to {}", args.content.len(), args.path)),
            Err(e) => ToolResult::fail(format!("cannot write '{}': {e}", args.path)),
        }
    }
}
