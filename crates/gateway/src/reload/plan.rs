//! What a new configuration changes, worked out before anything is
//! touched: the settings that only a restart applies (kept as they were,
//! and named), the channels to start, stop or restart, and whether the
//! cron schedule changed.

use serde_json::Value;
use switchboard_config::Config;

/// Puts one setting of the running configuration (second) back into the
/// new one (first).
type Keep = fn(&mut Config, &Config);

/// Top-level settings a running gateway keeps until it restarts: each
/// one's name and how to put its old value back.
const FIXED: &[(&str, Keep)] = &[
    ("database_url", |m, o| m.database_url.clone_from(&o.database_url)),
    ("workspace_dir", |m, o| m.workspace_dir.clone_from(&o.workspace_dir)),
    // Who may sign in to the console applies at once (see `plan`).
    ("web", |m, o| {
        let people = std::mem::take(&mut m.web.console_users);
        m.web = o.web.clone();
        m.web.console_users = people;
    }),
    ("telemetry", |m, o| m.telemetry = o.telemetry.clone()),
    ("sandbox", |m, o| m.sandbox = o.sandbox.clone()),
    ("mcp_servers", |m, o| m.mcp_servers.clone_from(&o.mcp_servers)),
    ("cluster", |m, o| m.cluster = o.cluster.clone()),
    ("lanes", |m, o| m.lanes = o.lanes.clone()),
];

/// Keys of a channel table read where they are used (admission, routing,
/// approval rooms, streaming): changing them restarts nothing.
const LIVE_CHANNEL_KEYS: &[&str] = &["allowed_users", "require_mention_in_groups", "rooms", "streaming"];

/// See the module doc.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Every top-level setting (and channel table) that changed, for the
    /// log: what a reload loosened or tightened is on record.
    pub(crate) changed: Vec<String>,
    /// Changed settings that wait for a restart (`web`, `channels.local.x`).
    pub(crate) fixed: Vec<String>,
    /// Platform channels that are new, gone, or whose connection changed.
    pub(crate) start: Vec<String>,
    pub(crate) stop: Vec<String>,
    pub(crate) restart: Vec<String>,
    /// The cron schedule changed.
    pub(crate) cron: bool,
}

fn json<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// The plan from `old` to `new`, and the configuration to put in force:
/// `new` with every fixed setting (and local channel) as in `old`.
pub(crate) fn plan(old: &Config, new: &Config) -> (Plan, Config) {
    let (old_v, new_v) = (json(old), json(new));
    let mut plan = Plan {
        changed: changed_keys(&old_v, &new_v),
        ..Plan::default()
    };
    let mut merged = new.clone();
    for (key, keep) in FIXED {
        let live_part = if *key == "web" { "console_users" } else { "" };
        if without(&old_v[*key], live_part) != without(&new_v[*key], live_part) {
            plan.fixed.push((*key).to_string());
        }
        keep(&mut merged, old);
    }
    // Local chats are served by this process's own listener: their people
    // wait for a restart, who may speak there applies at once.
    let (old_local, new_local) = (&old_v["channels"]["local"], &new_v["channels"]["local"]);
    let local_connection = |v: &Value| -> Value {
        v.as_object()
            .map(|o| {
                o.iter()
                    .map(|(k, t)| (k.clone(), without(t, "allowed_users")))
                    .collect()
            })
            .unwrap_or(Value::Null)
    };
    if local_connection(old_local) != local_connection(new_local) {
        plan.fixed.push("channels.local".into());
    }
    let mut local = old.channels.local.clone();
    for (alias, table) in &mut local {
        if let Some(now) = new.channels.local.get(alias) {
            table.allowed_users.clone_from(&now.allowed_users);
        }
    }
    merged.channels.local = local;
    for kind in ["telegram", "discord", "matrix"] {
        let (before, after) = (&old_v["channels"][kind], &new_v["channels"][kind]);
        let aliases = keys(before)
            .chain(keys(after))
            .collect::<std::collections::BTreeSet<_>>();
        for alias in aliases {
            let name = format!("{kind}.{alias}");
            match (running(&before[&alias]), running(&after[&alias])) {
                (false, true) => plan.start.push(name),
                (true, false) => plan.stop.push(name),
                (true, true) if connection(&before[&alias]) != connection(&after[&alias]) => plan.restart.push(name),
                _ => {}
            }
        }
    }
    plan.cron = old_v["cron"] != new_v["cron"];
    (plan, merged)
}

/// `v` without its key `key` (an object), as it is otherwise.
fn without(v: &Value, key: &str) -> Value {
    let mut v = v.clone();
    if let Some(o) = v.as_object_mut() {
        o.remove(key);
    }
    v
}

/// The top-level keys, and the channel tables, whose values differ.
fn changed_keys(old: &Value, new: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let tops: std::collections::BTreeSet<String> = keys(old).chain(keys(new)).collect();
    for k in tops.into_iter().filter(|k| old[k] != new[k]) {
        if k == "channels" {
            for kind in keys(&old[&k])
                .chain(keys(&new[&k]))
                .collect::<std::collections::BTreeSet<_>>()
            {
                let (a, b) = (&old[&k][&kind], &new[&k][&kind]);
                for alias in keys(a).chain(keys(b)).collect::<std::collections::BTreeSet<_>>() {
                    if a[&alias] != b[&alias] {
                        out.push(format!("channels.{kind}.{alias}"));
                    }
                }
            }
        } else {
            out.push(k);
        }
    }
    out
}

fn keys(v: &Value) -> impl Iterator<Item = String> + '_ {
    v.as_object().into_iter().flat_map(|o| o.keys().cloned())
}

/// A table that exists and is enabled.
fn running(table: &Value) -> bool {
    table.is_object() && table["enabled"] != Value::Bool(false)
}

/// What the adapter was built from: the table without its live keys.
fn connection(table: &Value) -> Value {
    let mut t = table.clone();
    if let Some(o) = t.as_object_mut() {
        // A Matrix bot that joins on invite takes its inviters from
        // allowed_users when it is built.
        let join_on_invite = o.get("join_on_invite") == Some(&Value::Bool(true));
        for k in LIVE_CHANNEL_KEYS {
            if !(join_on_invite && *k == "allowed_users") {
                o.remove(*k);
            }
        }
    }
    t
}

#[cfg(test)]
mod tests;
