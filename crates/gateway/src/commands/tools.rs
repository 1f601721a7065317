//! `/tools`: the tools the chat's agent is offered, with the risk the
//! approval gate sees and where each comes from (built in or an MCP server).

use super::CommandContext;

pub(super) async fn apply(ctx: &CommandContext<'_>) -> String {
    let runtime = ctx.runtime;
    // Lazy MCP servers start here, so their tools are listed.
    runtime.mcp_ready(ctx.agent).await;
    let rows = runtime.tool_rows(ctx.agent);
    if rows.is_empty() {
        return format!("{} is offered no tools (its risk profile allows none).", ctx.agent);
    }
    let mut lines = vec![format!("Tools of {}:", ctx.agent)];
    for row in rows {
        lines.push(format!("- {} — risk {}; {}", row.name, row.risk, row.source));
    }
    // Why a server failed can name hosts and what it wrote on stderr:
    // operators are told, others only that it is down.
    let operator = ctx.sender_may_operate();
    for (server, why) in runtime.mcp_unavailable(ctx.agent) {
        if operator {
            lines.push(format!("MCP server {server} is unavailable: {why}"));
        } else {
            lines.push(format!("MCP server {server} is unavailable (an operator can see why)."));
        }
    }
    lines.join("\n")
}
