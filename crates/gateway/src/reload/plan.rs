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
    ("web", |m, o| m.web = o.web.clone()),
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
    let mut plan = Plan::default();
    let mut merged = new.clone();
    for (key, keep) in FIXED {
        if old_v[*key] != new_v[*key] {
            plan.fixed.push((*key).to_string());
            keep(&mut merged, old);
        }
    }
    if old_v["channels"]["local"] != new_v["channels"]["local"] {
        plan.fixed.push("channels.local".into());
        merged.channels.local.clone_from(&old.channels.local);
    }
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
