//! MCP servers, from either source: a command with its arguments and
//! environment, or an address with headers. Each is imported with every
//! tool at risk `high` (asked of an approver) until the operator rates it.

use super::plan::{Plan, key, list, q};
use super::source::Source;
use serde_json::Value;

/// Add `[mcp_servers.<name>]` from `server`; whether it was.
pub(super) fn server(s: &Source, plan: &mut Plan, from: &str, name: &str, server: &Value) -> bool {
    let header = format!("mcp_servers.{}", key(name));
    if server.get("enabled") == Some(&Value::Bool(false)) || server.get("disabled") == Some(&Value::Bool(true)) {
        plan.left(from, "disabled there: not imported");
        return false;
    }
    if let Some(cmd) = server.get("command").and_then(Value::as_str) {
        plan.set(&header, "command", q(cmd));
        let args = super::common::strings(server.get("args").cloned());
        if !args.is_empty() {
            plan.set(&header, "args", list(&args));
        }
        for (var, raw) in server.get("env").and_then(Value::as_object).into_iter().flatten() {
            // Named for the server: a source cannot make a server's
            // variable the provider's key (OPENAI_API_KEY) by its name.
            let name_for = format!("MCP_{name}_{var}");
            if let Some(v) = s.secret(plan, &format!("{from}.env.{var}"), raw, &name_for) {
                plan.set(&format!("{header}.env"), var, v);
            }
        }
    } else if let Some(url) = server.get("url").and_then(Value::as_str) {
        plan.set(&header, "url", q(url));
        for (field, raw) in server.get("headers").and_then(Value::as_object).into_iter().flatten() {
            let var = format!("MCP_{name}_{field}");
            if let Some(v) = s.secret(plan, &format!("{from}.headers.{field}"), raw, &var) {
                plan.set(&format!("{header}.headers"), field, v);
            }
        }
    } else {
        plan.left(from, "neither a command nor a url");
        return false;
    }
    let what = server
        .get("command")
        .or_else(|| server.get("url"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    plan.mapped(
        from,
        format!("[{header}] ({what}), every tool at risk high (asked) until you rate them"),
    );
    true
}
