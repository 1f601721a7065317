//! The `subagents` tool: the model's view of its own children (list) and
//! the means to stop one (kill), limited to this session's children.

use crate::policy::Risk;
use crate::tools::{Tool, ToolContext, ToolResult};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

/// `subagents`: list, steer or kill this session's children.
pub struct SubagentsTool;

#[derive(Deserialize)]
struct Args {
    action: String,
    #[serde(default, rename = "runId")]
    run_id: Option<String>,
}

#[async_trait]
impl Tool for SubagentsTool {
    fn name(&self) -> &'static str {
        "subagents"
    }
    fn effect(&self, args: &Value) -> Risk {
        if args.get("action").and_then(Value::as_str) == Some("list") {
            Risk::Read
        } else {
            Risk::Low
        }
    }
    async fn execute(&self, args: Value, ctx: &ToolContext) -> ToolResult {
        let args: Args = crate::tools::tool_args!(self, args);
        let core = &crate::core::runtime_of!(ctx);
        let rows = match ctx.store.runs().of_session(&ctx.session_key, 100).await {
            Ok(r) => r,
            Err(e) => return ToolResult::fail(format!("the session registry could not be read ({e})")),
        };
        match args.action.as_str() {
            "list" => ToolResult::ok(
                json!({"children": rows.iter().map(|r| json!({
                    "runId": r.id, "label": r.label, "agentId": r.agent, "status": r.status,
                    "tokens": r.tokens_in + r.tokens_out, "task": r.task,
                })).collect::<Vec<_>>()})
                .to_string(),
            ),
            "kill" => {
                let Some(id) = args.run_id else {
                    return ToolResult::fail("Missing 'runId' parameter");
                };
                let Some(row) = rows.into_iter().find(|r| r.id == id) else {
                    return ToolResult::fail(format!("No child run '{id}' of this session"));
                };
                let killed = core
                    .kill_tree(vec![row], &format!("killed by {} (subagents tool)", ctx.agent))
                    .await;
                ToolResult::ok(format!("killed {} run(s)", killed.len()))
            }
            other => ToolResult::fail(format!("Unknown action '{other}'. Use list/kill.")),
        }
    }
}
