//! `file_read`: read a text file inside the agent workspace.

use super::{Tool, ToolContext, ToolResult, parse_args, truncate};
use crate::policy::{Effect, resolve_in_workspace};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

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
        let args: Args = match parse_args(self.name(), args) {
            Ok(a) => a,
            Err(e) => return e,
        };
        let p = &ctx.policy;
        let path = match resolve_in_workspace(&p.workspace, &args.path, &p.forbidden_paths) {
            Ok(p) => p,
            Err(e) => return ToolResult::fail(e.to_string()),
        };
        match tokio::fs::read(&path).await {
            Ok(bytes) => ToolResult::ok(truncate(&String::from_utf8_lossy(&bytes), MAX_READ)),
            Err(e) => ToolResult::fail(format!("cannot read '{}': {e}", args.path)),
        }
    }
}
