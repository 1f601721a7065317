//! Checks of the local HTTP surface: where it listens, the console's own
//! listener and public address, and who may use the local channels.

use super::user_list;
use crate::{Config, Problem};

/// `[web]`: the local API's socket, loopback listeners, console users and
/// the public address.
pub(super) fn web(c: &Config, v: &mut Vec<Problem>) {
    socket(c, v);
    if let Some(listen) = &c.web.listen {
        match listen.parse::<std::net::SocketAddr>() {
            Ok(addr) if addr.ip().is_loopback() => {}
            Ok(_) => v.push(Problem::new(
                "web.listen",
                "the local TCP listener must stay on this machine; listen on a loopback address such as 127.0.0.1:8088",
            )),
            Err(_) => v.push(Problem::new(
                "web.listen",
                format!("'{listen}' is not an address like 127.0.0.1:8088"),
            )),
        }
    }
    if c.web.console && c.web.console_addr().is_none() {
        v.push(Problem::new(
            "web.console",
            "the console is a web page and needs a TCP address: set web.console_listen = \"127.0.0.1:8089\" (or web.listen)",
        ));
    }
    user_list("web.console_users", &c.web.console_users, false, v);
    match &c.web.console_listen {
        Some(l) => match l.parse::<std::net::SocketAddr>() {
            Ok(addr) if addr.ip().is_loopback() && Some(l) != c.web.listen.as_ref() => {}
            Ok(_) => v.push(Problem::new(
                "web.console_listen",
                "must be a loopback address other than web.listen, such as 127.0.0.1:8089 (the reverse proxy forwards to it)",
            )),
            Err(_) => v.push(Problem::new(
                "web.console_listen",
                format!("'{l}' is not an address like 127.0.0.1:8089"),
            )),
        },
        None if c.web.console && c.web.public_url.is_some() => v.push(Problem::new(
            "web.console_listen",
            "web.public_url is set, so the console is meant to be reached through a reverse proxy: give it a listener of its own, e.g. console_listen = \"127.0.0.1:8089\", and point the proxy there, never at web.listen (the local API)",
        )),
        None => {}
    }
    if let Some(url) = &c.web.public_url
        && !(url.starts_with("http://") || url.starts_with("https://"))
    {
        v.push(Problem::new(
            "web.public_url",
            format!("'{url}' is not an http:// or https:// URL (the console's sign-in links start with it)"),
        ));
    }
}

/// `[telemetry]`: the metrics listener is an address of its own.
pub(super) fn telemetry(c: &Config, v: &mut Vec<Problem>) {
    if let Some(url) = &c.telemetry.otlp_endpoint
        && !(url.starts_with("http://") || url.starts_with("https://"))
    {
        v.push(Problem::new(
            "telemetry.otlp_endpoint",
            format!("'{url}' is not an http:// or https:// URL (an OTLP/HTTP collector, e.g. http://127.0.0.1:4318)"),
        ));
    }
    let Some(l) = &c.telemetry.metrics_listen else {
        return;
    };
    let taken = [c.web.listen.as_ref(), c.web.console_listen.as_ref()];
    match l.parse::<std::net::SocketAddr>() {
        Ok(_) if taken.contains(&Some(l)) => v.push(Problem::new(
            "telemetry.metrics_listen",
            "must differ from web.listen and web.console_listen (/metrics is served there already)",
        )),
        Ok(_) => {}
        Err(_) => v.push(Problem::new(
            "telemetry.metrics_listen",
            format!("'{l}' is not an address like 127.0.0.1:9464"),
        )),
    }
}

/// `[channels.local.*]`: allowed users, and a token or people (not both).
pub(super) fn local(c: &Config, v: &mut Vec<Problem>) {
    for (alias, l) in &c.channels.local {
        user_list(
            &format!("channels.local.{alias}.allowed_users"),
            &l.allowed_users,
            true,
            v,
        );
        if l.allowed_users.iter().any(|u| u == "paired") {
            v.push(Problem::new(
                format!("channels.local.{alias}.allowed_users"),
                "\"paired\" is for chat platforms; list local users (cli:<name>) instead",
            ));
        }
        if l.token.is_some() && !l.people.is_empty() {
            v.push(Problem::new(
                format!("channels.local.{alias}.token"),
                "set either token (one for every caller) or people (one per person), not both",
            ));
        }
        let tokens = l.token.iter().map(|t| (format!("channels.local.{alias}.token"), t));
        let people = l
            .people
            .iter()
            .map(|(n, t)| (format!("channels.local.{alias}.people.{n}"), t));
        for (at, token) in tokens.chain(people) {
            if super::blank(token) {
                v.push(Problem::new(
                    at,
                    "an empty token is what a request without one sends: anyone on this machine would pass; write a long random token",
                ));
            }
        }
        for name in l.people.keys() {
            if name.is_empty() || !name.chars().all(|ch| ch.is_ascii_alphanumeric() || "._-".contains(ch)) {
                v.push(Problem::new(
                    format!("channels.local.{alias}.people.{name}"),
                    "a person's name is letters, digits, '.', '_' or '-' (they are cli:<name>)",
                ));
            }
        }
    }
}

/// `web.socket`: a path a UNIX socket can have, outside every workspace
/// (a command may read and write its workspace).
fn socket(c: &Config, v: &mut Vec<Problem>) {
    let path = std::path::Path::new(&c.web.socket);
    let cwd = std::env::current_dir().unwrap_or_default();
    let absolute = cwd.join(path);
    if c.web.socket.is_empty() || absolute.as_os_str().len() >= 108 {
        v.push(Problem::new(
            "web.socket",
            format!(
                "'{}' cannot be a UNIX socket's path (empty, or {} bytes from the working folder; the limit is 107): choose a shorter path such as data/switchboard.sock",
                c.web.socket,
                absolute.as_os_str().len()
            ),
        ));
    }
    // Every agent's and MCP server's workspace lies in workspace_dir.
    let ws = &c.workspace_dir;
    if lexical(&absolute).starts_with(lexical(&cwd.join(ws))) {
        v.push(Problem::new(
            "web.socket",
            format!(
                "'{}' lies in the workspace folder '{ws}', where commands could reach it; put it in the data folder, e.g. data/switchboard.sock",
                c.web.socket
            ),
        ));
    }
}

/// `path` with `.` and `..` resolved by name (the folders may not exist yet).
fn lexical(path: &std::path::Path) -> std::path::PathBuf {
    let mut out = std::path::PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}
