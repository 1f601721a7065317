//! `file_read`: read a text file inside the agent workspace.

use super::{Tool, ToolContext, ToolResult, tool_args};
use crate::policy::Effect;
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;

pub(crate) struct FileRead;

#[derive(Deserialize)]
struct Args {
    path: String,
}

const MAX_READ: usize = 256 * 1024;

#[async_trait]
impl Tool for FileRead {
    fn name(&self) -> &'static str {
        "file_read"
    }
    fn description(&self) -> String {
        "Read a text file from the agent workspace.".into()
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"path": {"type": "string", "description": "Path relative to the workspace"}}, "required": ["path"]})
    }
    fn effect(&self, _args: &Value) -> Effect {
        Effect::Read
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> ToolResult {
        let args: Args = tool_args!(self, args);
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
