//! Checks of `[mcp_servers.<name>]` and of the agents that name them.

use crate::{Config, Problem};

/// A server's transport: a command (stdio) or a url (streamable HTTP),
/// never both, and only the settings of the one it uses (`table` is its
/// table's path, `at` makes a key's).
fn transport(at: &dyn Fn(&str) -> String, table: &str, s: &crate::McpServerConfig, v: &mut Vec<Problem>) {
    match (&s.command, &s.url) {
        (Some(_), Some(_)) => v.push(Problem::new(
            at("url"),
            "give either command (a program spoken to over stdio) or url (streamable HTTP), not both",
        )),
        (None, None) => v.push(Problem::new(
            table.to_string(),
            "give command (a program spoken to over stdio) or url (a streamable HTTP endpoint)",
        )),
        (Some(cmd), None) if cmd.trim().is_empty() => {
            v.push(Problem::new(at("command"), "the program to start is empty"));
        }
        (None, Some(url)) if !(url.starts_with("http://") || url.starts_with("https://")) => v.push(Problem::new(
            at("url"),
            format!("'{url}' is not an http:// or https:// URL"),
        )),
        _ => {}
    }
    if s.url.is_some() {
        for (key, given) in [
            ("args", !s.args.is_empty()),
            ("env", !s.env.is_empty()),
            ("workspace", s.workspace.is_some()),
            ("read_paths", !s.read_paths.is_empty()),
        ] {
            if given {
                v.push(Problem::new(
                    at(key),
                    "only a stdio server (command) takes it; remove it or use command",
                ));
            }
        }
    }
    if s.command.is_some() && !s.headers.is_empty() {
        v.push(Problem::new(
            at("headers"),
            "only an HTTP server (url) takes headers; remove them",
        ));
    }
}

/// Every server's transport, limits and risk table; every agent's
/// `mcp_servers` list.
pub(super) fn servers(c: &Config, v: &mut Vec<Problem>) {
    for (name, s) in &c.mcp_servers {
        let at = |k: &str| format!("mcp_servers.{name}.{k}");
        // `<server>__<tool>` is what the model sees: a name holding "__"
        // or ending in '_' could make two servers' tools look the same
        // (server `a` with tool `b__c`, server `a__b` with tool `c`).
        if name.is_empty()
            || name.ends_with('_')
            || name.contains("__")
            || !name
                .chars()
                .all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '-')
        {
            v.push(Problem::new(
                format!("mcp_servers.{name}"),
                "a server name may hold only letters, digits, '_' and '-', may not hold \"__\" or end with '_' (the model calls its tools <server>__<tool>); rename it, e.g. to one word",
            ));
        }
        if let Some(ws) = &s.workspace {
            own_workspace(c, &at("workspace"), ws, v);
        }
        transport(&at, &format!("mcp_servers.{name}"), s, v);
        for (key, secs) in [
            ("timeout_secs", s.timeout_secs),
            ("startup_timeout_secs", s.startup_timeout_secs),
        ] {
            if !(1..=3600).contains(&secs) {
                v.push(Problem::new(
                    at(key),
                    format!("{secs} is out of range; use 1 to 3600 seconds"),
                ));
            }
        }
        if s.risk.keys().any(String::is_empty) {
            v.push(Problem::new(at("risk"), "a risk entry needs a tool name or \"*\""));
        }
    }
    for (agent, a) in &c.agents {
        for (i, server) in a.mcp_servers.iter().enumerate() {
            if !c.mcp_servers.contains_key(server) {
                let known: Vec<&str> = c.mcp_servers.keys().map(String::as_str).collect();
                v.push(Problem::new(
                    format!("agents.{agent}.mcp_servers[{i}]"),
                    format!(
                        "unknown MCP server '{server}'; configured: {}",
                        if known.is_empty() {
                            "none".into()
                        } else {
                            known.join(", ")
                        }
                    ),
                ));
            }
        }
    }
}

/// A server's own folder may not hold or lie inside the agents' workspaces
/// or records: it would read and write what agents keep apart.
fn own_workspace(c: &Config, path: &str, ws: &str, v: &mut Vec<Problem>) {
    // Compared as written, without `.` parts (`./x` is `x`, `.` is here).
    let plain = |p: &str| -> std::path::PathBuf {
        std::path::Path::new(p)
            .components()
            .filter(|c| !matches!(c, std::path::Component::CurDir))
            .collect()
    };
    let (ws, root) = (plain(ws), plain(&c.workspace_dir));
    let inside_an_agent = c
        .agents
        .keys()
        .map(|a| root.join(a))
        .chain([root.join(".records")])
        .any(|p| ws.starts_with(&p));
    if root.starts_with(&ws) || inside_an_agent {
        v.push(Problem::new(
            path,
            format!(
                "{} holds or lies in the agents' workspaces under {}; give the server a folder of its own (default {}/.mcp/<name>)",
                ws.display(),
                root.display(),
                root.display()
            ),
        ));
    }
}
