//! Checks of the chat platforms' settings: Telegram, Discord and Matrix.
//! Each problem names the key to change.

use super::{is_http_url, user_list, valid_user_id};
use crate::{Config, Problem};

/// `[channels.telegram.*]`: API URL, long-poll timeout, webhook mode.
pub(super) fn telegram(c: &Config, v: &mut Vec<Problem>) {
    for (name, t) in &c.channels.telegram {
        let at = |k: &str| format!("channels.telegram.{name}.{k}");
        if !is_http_url(&t.api_url) {
            v.push(Problem::new(
                at("api_url"),
                format!("'{}' is not an http(s) URL", t.api_url),
            ));
        }
        user_list(&at("allowed_users"), &t.allowed_users, true, v);
        if !(1..=60).contains(&t.poll_timeout_secs) {
            v.push(Problem::new(at("poll_timeout_secs"), "must be between 1 and 60"));
        }
        if let Some(url) = &t.webhook_url {
            if !url.starts_with("https://") {
                v.push(Problem::new(at("webhook_url"), "Telegram only posts to https:// URLs"));
            }
            if t.webhook_listen
                .as_deref()
                .is_none_or(|l| l.parse::<std::net::SocketAddr>().is_err())
            {
                v.push(Problem::new(
                    at("webhook_listen"),
                    "webhook mode needs a local address like 127.0.0.1:8443",
                ));
            }
            if t.webhook_secret.as_ref().is_none_or(super::blank) {
                v.push(Problem::new(
                    at("webhook_secret"),
                    "webhook mode needs a secret (not empty) so that only Telegram can post updates",
                ));
            }
        }
    }
}

/// `[channels.discord.*]`: guild and channel ids, API and gateway URLs.
pub(super) fn discord(c: &Config, v: &mut Vec<Problem>) {
    for (name, d) in &c.channels.discord {
        let at = |k: &str| format!("channels.discord.{name}.{k}");
        for g in &d.guilds {
            if g.parse::<u64>().is_err() {
                v.push(Problem::new(
                    at("guilds"),
                    format!("'{g}' is not a guild id (a number, as Discord shows it with developer mode on)"),
                ));
            }
        }
        if let Some(url) = &d.api_url
            && !is_http_url(url)
        {
            v.push(Problem::new(at("api_url"), format!("'{url}' is not an http(s) URL")));
        }
        if let Some(url) = &d.gateway_url
            && !(url.starts_with("ws://") || url.starts_with("wss://"))
        {
            v.push(Problem::new(
                at("gateway_url"),
                format!("'{url}' is not a ws(s):// URL"),
            ));
        }
        for (room, id) in &d.rooms {
            if id.parse::<u64>().is_err() {
                v.push(Problem::new(
                    at("rooms"),
                    format!("room '{room}': '{id}' is not a channel id (a number)"),
                ));
            }
        }
        user_list(
            &format!("channels.discord.{name}.allowed_users"),
            &d.allowed_users,
            true,
            v,
        );
    }
}

/// `[channels.matrix.*]`: homeserver, bot id, credentials, rooms.
pub(super) fn matrix(c: &Config, v: &mut Vec<Problem>) {
    for (name, m) in &c.channels.matrix {
        let at = |k: &str| format!("channels.matrix.{name}.{k}");
        if !is_http_url(&m.homeserver) {
            v.push(Problem::new(
                at("homeserver"),
                format!("'{}' is not an http(s) URL", m.homeserver),
            ));
        }
        if !valid_user_id(&m.user_id) || !m.user_id.starts_with('@') {
            v.push(Problem::new(
                at("user_id"),
                "must be a full Matrix id like @bot:example.org",
            ));
        }
        if m.password.is_none() && m.access_token.is_none() {
            v.push(Problem::new(
                format!("channels.matrix.{name}"),
                "set password or access_token",
            ));
        }
        if !(1..=300).contains(&m.sync_timeout_secs) {
            v.push(Problem::new(at("sync_timeout_secs"), "must be between 1 and 300"));
        }
        for (i, room) in m.auto_join.iter().enumerate() {
            if !is_room_id(room) && !is_room_alias(room) {
                v.push(Problem::new(
                    format!("channels.matrix.{name}.auto_join[{i}]"),
                    format!("'{room}' is not a room id (!id or !id:server) or alias (#name:server)"),
                ));
            }
        }
        for (room_name, id) in &m.rooms {
            if !is_room_id(id) {
                v.push(Problem::new(
                    format!("channels.matrix.{name}.rooms.{room_name}"),
                    format!("'{id}' is not a room id (!id or !id:server); aliases are not accepted here"),
                ));
            }
        }
        user_list(&at("allowed_users"), &m.allowed_users, true, v);
    }
}

/// A Matrix room id: `!opaque:server` (room versions up to 11) or
/// `!opaque` (room version 12 and later, the default of current homeservers).
fn is_room_id(s: &str) -> bool {
    s.strip_prefix('!')
        .is_some_and(|rest| !rest.is_empty() && !rest.starts_with(':') && !rest.contains(char::is_whitespace))
}

/// A Matrix room alias: `#name:server`.
fn is_room_alias(s: &str) -> bool {
    s.strip_prefix('#')
        .and_then(|rest| rest.split_once(':'))
        .is_some_and(|(local, server)| !local.is_empty() && !server.is_empty() && !local.contains(char::is_whitespace))
}
