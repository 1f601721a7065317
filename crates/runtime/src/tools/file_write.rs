//! `file_write`: write (or append to) a file inside the agent workspace.
//!
//! The path is checked first (a clear refusal); the write happens on a
//! thread the kernel confines to the workspace (docs/security.md).

use super::{ToolContext, ToolResult, builtin_tool};
use serde::Deserialize;
use std::io::Write;
use switchboard_sandbox::fs::Access;

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
        let (content, append) = (args.content.into_bytes(), args.append);
        let len = content.len();
        let result = ctx
            .confined(Access::ReadWrite, move || {
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                // The path was resolved link by link; a link put in its
                // place since is not followed.
                let mut f = switchboard_sandbox::fs::open_regular(
                    &path,
                    std::fs::OpenOptions::new()
                        .create(true)
                        .write(true)
                        .append(append)
                        .truncate(!append),
                )?;
                f.write_all(&content)?;
                f.flush()
            })
            .await;
        match result {
            Ok(()) => ToolResult::ok(format!("wrote {len} bytes to {}", args.path)),
            Err(e) => ToolResult::fail(format!("cannot write '{}': {e}", args.path)),
        }
    }
}
