//! Who may use the local API: callers on this machine, never a web page.
//!
//! A browser can be made to send requests to `127.0.0.1` from any site
//! (DNS rebinding: a name that first resolved to the attacker's server now
//! resolves to loopback). Such requests carry the attacker's name in
//! `Host` and usually the page's `Origin`, so both are checked: `Host`
//! must be a loopback name or address, and an `Origin`, when present, must
//! be one too. With `[channels.local.<alias>] token` set, every request to
//! that alias must also carry `Authorization: Bearer <token>`.

use axum::extract::connect_info::Connected;
use axum::http::HeaderMap;
use axum::serve::IncomingStream;
use tokio::net::UnixListener;

/// A caller on the UNIX socket (which only the gateway's own user, and
/// root, may connect to).
#[derive(Clone, Debug)]
pub(crate) struct UnixPeer;

impl Connected<IncomingStream<'_, UnixListener>> for UnixPeer {
    fn connect_info(_stream: IncomingStream<'_, UnixListener>) -> Self {
        Self
    }
}

/// `localhost`, `*.localhost`, `127.0.0.0/8` and `::1`, with or without a port.
pub(crate) fn is_loopback_host(host: &str) -> bool {
    let name = if let Some(rest) = host.strip_prefix('[') {
        // `[::1]:8088`
        match rest.split_once(']') {
            Some((inner, tail)) if tail.is_empty() || is_port(tail) => inner,
            _ => return false,
        }
    } else {
        match host.rsplit_once(':') {
            Some((name, port)) if is_port(&format!(":{port}")) && !name.contains(':') => name,
            Some(_) if host.parse::<std::net::Ipv6Addr>().is_ok() => host,
            Some(_) => return false,
            None => host,
        }
    };
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    if name == "localhost" || name.ends_with(".localhost") {
        return true;
    }
    match name.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => false,
    }
}

fn is_port(tail: &str) -> bool {
    tail.strip_prefix(':')
        .is_some_and(|p| !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()))
}

/// Headers a proxy adds when it relays a request: such a request came
/// from elsewhere, whatever its `Host` says.
const RELAYED: &[&str] = &[
    "forwarded",
    "x-forwarded-for",
    "x-forwarded-host",
    "x-forwarded-proto",
    "x-real-ip",
    "via",
    "x-original-forwarded-for",
    "cf-connecting-ip",
    "true-client-ip",
    "x-client-ip",
    "x-cluster-client-ip",
    "fastly-client-ip",
    "x-envoy-external-address",
];

/// The `cli:` name whose token the request carries, of `people`
/// (`(token, name)`; each compared in constant time).
pub(crate) fn person(headers: &HeaderMap, people: &[(String, String)]) -> Option<String> {
    let given = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))?;
    people
        .iter()
        .filter(|(token, _)| switchboard_core::constant_time_eq(given.as_bytes(), token.as_bytes()))
        .map(|(_, name)| name.clone())
        .next()
}

/// Why a request is refused, or `None` when it may go on.
pub(crate) fn refusal(headers: &HeaderMap, token: Option<&str>) -> Option<(u16, String)> {
    let relayed = headers
        .keys()
        .find(|k| RELAYED.contains(&k.as_str()) || k.as_str().starts_with("x-forwarded-"));
    if let Some(header) = relayed {
        return Some((
            403,
            format!(
                "request relayed by a proxy ({header}) refused: the local API is for callers on this machine; only the console may be proxied, on [web].console_listen"
            ),
        ));
    }
    let host = headers.get("host").and_then(|v| v.to_str().ok()).unwrap_or("");
    if !is_loopback_host(host) {
        return Some((
            403,
            format!(
                "Host '{host}' refused: the local API answers only requests addressed to localhost or a loopback address"
            ),
        ));
    }
    if let Some(origin) = headers.get("origin") {
        let origin = origin.to_str().unwrap_or("");
        let authority = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"))
            .unwrap_or("");
        if !is_loopback_host(authority) {
            return Some((
                403,
                format!("Origin '{origin}' refused: web pages from other sites may not use the local API"),
            ));
        }
    }
    if let Some(token) = token {
        let given = headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .unwrap_or("");
        if !switchboard_core::constant_time_eq(given.as_bytes(), token.as_bytes()) {
            return Some((
                401,
                "this local channel needs 'Authorization: Bearer <token>' with its [channels.local.<alias>].token"
                    .into(),
            ));
        }
    }
    None
}

/// Local chats carry people of this machine only: `cli:<name>`. An id of
/// another platform (`tg:1`, `@op:server`) would let a local caller speak,
/// and decide approvals, as someone else.
pub(crate) fn check_user(user: &str) -> Result<(), String> {
    match user.strip_prefix("cli:") {
        Some(name) if !name.is_empty() && !name.chars().any(char::is_control) => Ok(()),
        _ => Err(format!(
            "user '{user}' refused: local channels carry people of this machine only, named 'cli:<name>'"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relayed_requests_are_refused() {
        for header in [
            "forwarded",
            "x-forwarded-for",
            "x-forwarded-host",
            "x-real-ip",
            "via",
            "x-forwarded-port",
        ] {
            let mut h = HeaderMap::new();
            h.insert("host", "127.0.0.1:8088".parse().unwrap());
            h.insert(header, "1.2.3.4".parse().unwrap());
            let (status, why) = refusal(&h, None).expect(header);
            assert_eq!(status, 403);
            assert!(why.contains("relayed by a proxy"), "{why}");
        }
        let mut h = HeaderMap::new();
        h.insert("host", "127.0.0.1:8088".parse().unwrap());
        assert!(refusal(&h, None).is_none());
    }

    #[test]
    fn loopback_hosts() {
        for ok in [
            "localhost",
            "localhost:8088",
            "LOCALHOST.",
            "app.localhost:1",
            "127.0.0.1",
            "127.0.0.1:8088",
            "127.1.2.3:80",
            "[::1]:8088",
            "[::1]",
            "::1",
        ] {
            assert!(is_loopback_host(ok), "{ok}");
        }
        for bad in [
            "",
            "evil.test",
            "evil.test:8088",
            "localhost.evil.test",
            "127.0.0.1.nip.io",
            "10.0.0.1:8088",
            "[::2]:1",
            "[::1]x",
            "localhost:80:80",
            "0.0.0.0:8088",
        ] {
            assert!(!is_loopback_host(bad), "{bad}");
        }
    }

    #[test]
    fn only_cli_people() {
        assert!(check_user("cli:ann").is_ok());
        for bad in ["tg:12345", "@op:server", "cli:", "ann", "discord:1", "cli:a\nb"] {
            assert!(check_user(bad).is_err(), "{bad}");
        }
    }
}
