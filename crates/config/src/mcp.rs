//! `[mcp_servers.<name>]`: Model Context Protocol tool servers agents may
//! use (docs/mcp.md).

use crate::{NetworkAccess, Secret};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use switchboard_core::Risk;

/// `[mcp_servers.<name>]`: one MCP server, reached over stdio (`command`)
/// or streamable HTTP (`url`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    /// A disabled server is never started and offers no tools (default true).
    #[serde(default = "crate::agent::yes")]
    pub enabled: bool,
    /// The program to start (stdio transport), confined by the kernel like commands are.
    #[serde(default)]
    pub command: Option<String>,
    /// Its arguments (default `[]`).
    #[serde(default)]
    pub args: Vec<String>,
    /// Environment variables for it, inline or `env:NAME` (default none; the gateway's own environment is not passed on except `PATH` and `LANG`; `HOME` is the server's workspace, `TMPDIR` a private folder).
    #[serde(default)]
    pub env: BTreeMap<String, Secret>,
    /// The server's streamable HTTP endpoint, e.g. `http://127.0.0.1:3001/mcp`.
    #[serde(default)]
    pub url: Option<String>,
    /// HTTP headers sent with every request, inline or `env:NAME` (e.g. `Authorization = "env:TRACKER_TOKEN"`).
    #[serde(default)]
    pub headers: BTreeMap<String, Secret>,
    /// Seconds one tool call may take before it is cancelled (default 60).
    #[serde(default = "default_timeout")]
    pub timeout_secs: u64,
    /// Seconds the server has to answer `initialize` (default 20).
    #[serde(default = "default_startup_timeout")]
    pub startup_timeout_secs: u64,
    /// `lazy` starts the server on its first use, `eager` when the gateway starts (default `lazy`).
    #[serde(default)]
    pub start: McpStart,
    /// The folder a stdio server may write in (default `<workspace_dir>/.mcp/<name>`); everything else it may only read.
    #[serde(default)]
    pub workspace: Option<String>,
    /// Folders a stdio server may read and run programs from besides the system's (`/usr`, `/lib`, ...), such as its installation: a `node_modules` or a virtualenv (default `[]`).
    #[serde(default)]
    pub read_paths: Vec<String>,
    /// The network a stdio server has: `none`, `loopback` or `any` (default `none`).
    #[serde(default)]
    pub network: NetworkAccess,
    /// Risk of each tool by name, `"*"` for the rest: `read`, `low`, `medium` or `high` (default: every tool `high`).
    #[serde(default)]
    pub risk: BTreeMap<String, Risk>,
    /// Let the server's own `readOnlyHint` (→ `read`) and `destructiveHint` (→ `high`) annotations set the risk of tools `risk` does not name (default false).
    #[serde(default)]
    pub trust_annotations: bool,
    /// Tools always offered with their full argument schema; the others of a server with more than 8 tools are offered by name and one-line description until called (default: all when the server has 8 or fewer).
    #[serde(default)]
    pub expose: Option<Vec<String>>,
}

/// When a server is started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum McpStart {
    /// On the first call of one of its tools (or listing of them).
    #[default]
    Lazy,
    /// When the gateway starts.
    Eager,
}

impl McpServerConfig {
    /// The risk of `tool` from the `risk` table (its own entry, then
    /// `"*"`), or `None` when the table says nothing about it.
    pub fn configured_risk(&self, tool: &str) -> Option<Risk> {
        self.risk.get(tool).or_else(|| self.risk.get("*")).copied()
    }
}

fn default_timeout() -> u64 {
    60
}

fn default_startup_timeout() -> u64 {
    20
}

/// Whether `pattern` (a tool name, `server.tool` or `server.*`) names `tool`.
pub fn tool_pattern_matches(pattern: &str, tool: &str) -> bool {
    match pattern.strip_suffix(".*") {
        Some(server) => tool.strip_prefix(server).is_some_and(|rest| rest.starts_with('.')),
        None => pattern == tool,
    }
}

/// Whether any pattern of `list` names `tool`.
pub fn listed(list: &[String], tool: &str) -> bool {
    list.iter().any(|p| tool_pattern_matches(p, tool))
}

#[cfg(test)]
mod tests {
    use super::tool_pattern_matches as m;

    #[test]
    fn patterns_name_one_tool_or_a_whole_server() {
        assert!(m("shell", "shell"));
        assert!(m("tracker.create_issue", "tracker.create_issue"));
        assert!(m("tracker.*", "tracker.create_issue"));
        assert!(!m("tracker.*", "trackers.create_issue"));
        assert!(!m("tracker.*", "tracker"));
        assert!(!m("tracker.read", "tracker.read_all"));
    }
}
