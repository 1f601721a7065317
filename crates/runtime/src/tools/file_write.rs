//! `file_write`: write (or append to) a file inside the agent workspace.

use super::{Tool, ToolContext, ToolResult, tool_args};
use crate::policy::{CommandRisk, Effect};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

pub(crate) struct FileWrite;

#[derive(Deserialize)]
struct Args {
    path: String,
    content: String,
    #[serde(default)]
    append: bool,
}

#[async_trait]
impl Tool for FileWrite {
    fn name(&self) -> &'static str {
        "file_write"
    }
    fn description(&self) -> String {
        "Write text to a file in the agent workspace (creates folders; append = true adds to the end).".into()
    }
    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Path relative to the workspace"},
                "content": {"type": "string"},
                "append": {"type": "boolean", "default": false}
            },
            "required": ["path", "content"]
        })
    }
    fn effect(&self, _args: &Value) -> Effect {
        Effect::Write(CommandRisk::Medium)
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> ToolResult {
        let args: Args = tool_args!(self, args);
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
