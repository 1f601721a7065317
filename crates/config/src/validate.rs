//! Cross-reference and range checks on a parsed configuration. Each check
//! pushes a [`Problem`] naming the TOML path to change; nothing stops at the
//! first problem.

use crate::{Config, Problem};
use croner::Cron;
use std::str::FromStr;

mod mcp;
mod platforms;
mod routes;
mod skills;
mod transcription;
mod web;

/// Tool names the runtime knows; lists of tool names are checked against it.
pub const BUILTIN_TOOLS: &[&str] = &[
    "shell",
    "file_read",
    "file_write",
    "send_file",
    "memory_store",
    "memory_recall",
    "model_switch",
    "spawn_subagent",
    "delegate",
    "sessions_spawn",
    "sessions_list",
    "sessions_history",
    "sessions_send",
    "subagents",
    "agents_list",
    "skill",
];

pub(crate) fn validate(c: &Config) -> Vec<Problem> {
    let mut v = Vec::new();
    database(c, &mut v);
    providers(c, &mut v);
    agents(c, &mut v);
    agent_models(c, &mut v);
    risk_profiles(c, &mut v);
    runtime_profiles(c, &mut v);
    cost(c, &mut v);
    lanes(c, &mut v);
    limits(c, &mut v);
    channels(c, &mut v);
    cron(c, &mut v);
    mcp::servers(c, &mut v);
    routes::routes(c, &mut v);
    routes::people(c, &mut v);
    routes::two_person(c, &mut v);
    transcription::transcription(c, &mut v);
    v
}

fn database(c: &Config, v: &mut Vec<Problem>) {
    let ok = ["sqlite:", "postgres://", "postgresql://"]
        .iter()
        .any(|p| c.database_url.starts_with(p));
    if !ok {
        v.push(Problem::new(
            "database_url",
            format!(
                "unsupported database URL '{}'; use sqlite://PATH or postgres://USER@HOST/DB",
                c.database_url
            ),
        ));
    }
}

fn limits(c: &Config, v: &mut Vec<Problem>) {
    let l = &c.limits;
    if !(1..=1000).contains(&l.session_queue) {
        v.push(Problem::new("limits.session_queue", "must be between 1 and 1000"));
    }
    if c.cluster.lease_secs < 3 {
        v.push(Problem::new(
            "cluster.lease_secs",
            "must be at least 3 (heartbeats come every third of it)",
        ));
    }
    let sb = &c.sandbox;
    for (key, value, min) in [
        ("sandbox.max_processes", u64::from(sb.max_processes), 8),
        ("sandbox.max_open_files", sb.max_open_files, 64),
        ("sandbox.max_file_size_mb", sb.max_file_size_mb, 1),
        ("sandbox.max_cpu_secs", sb.max_cpu_secs, 1),
    ] {
        if value < min {
            v.push(Problem::new(
                key,
                format!("must be at least {min} (commands could not start below it)"),
            ));
        }
    }
    if c.storage.inbox_retention_hours == 0 {
        v.push(Problem::new(
            "storage.inbox_retention_hours",
            "must be at least 1 (answered messages are kept that long to recognise redeliveries)",
        ));
    }
}

/// A secret written in the file as nothing (or spaces): it lets in
/// whoever sends none.
fn blank(secret: &crate::Secret) -> bool {
    matches!(secret, crate::Secret::Inline(v) if v.trim().is_empty())
}

fn is_http_url(u: &str) -> bool {
    u.starts_with("http://") || u.starts_with("https://")
}

fn providers(c: &Config, v: &mut Vec<Problem>) {
    for (name, p) in &c.providers {
        if p.context_window.is_some_and(|w| w < 512) {
            v.push(Problem::new(
                format!("providers.{name}.context_window"),
                "must be at least 512 tokens",
            ));
        }
        if p.max_tokens == 0 {
            v.push(Problem::new(format!("providers.{name}.max_tokens"), "must be above 0"));
        }
    }
    for (name, p) in &c.providers {
        let at = |k: &str| format!("providers.{name}.{k}");
        if p.model.trim().is_empty() {
            v.push(Problem::new(at("model"), "must name a model"));
        }
        if let Some(u) = &p.base_url
            && !is_http_url(u)
        {
            v.push(Problem::new(
                at("base_url"),
                format!("'{u}' is not an http:// or https:// URL"),
            ));
        }
        if let Some(t) = p.temperature
            && !(0.0..=2.0).contains(&t)
        {
            v.push(Problem::new(
                at("temperature"),
                format!("{t} is out of range; use 0.0 to 2.0"),
            ));
        }
        if p.timeout_secs == 0 {
            v.push(Problem::new(at("timeout_secs"), "must be at least 1"));
        }
        for (i, f) in p.fallbacks.iter().enumerate() {
            if f == name {
                v.push(Problem::new(
                    format!("{}[{i}]", at("fallbacks")),
                    "a provider cannot fall back to itself",
                ));
            } else if !c.providers.contains_key(f) {
                v.push(Problem::new(
                    format!("{}[{i}]", at("fallbacks")),
                    format!("unknown provider '{f}'; define [providers.{f}] or remove it"),
                ));
            }
        }
    }
}

fn valid_alias(a: &str) -> bool {
    !a.is_empty() && a.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '-')
}

fn agents(c: &Config, v: &mut Vec<Problem>) {
    if c.enabled_agents().is_empty() {
        v.push(Problem::new("agents", "no enabled agent; add an [agents.main] table"));
    }
    for (name, a) in &c.agents {
        let at = |k: &str| format!("agents.{name}.{k}");
        if !valid_alias(name) {
            v.push(Problem::new(
                format!("agents.{name}"),
                "agent aliases may only use letters, digits, '-' and '_'",
            ));
        }
        let references = [
            (
                "model_provider",
                "provider",
                "providers",
                &a.model_provider,
                c.providers.contains_key(&a.model_provider),
            ),
            (
                "risk_profile",
                "risk profile",
                "risk_profiles",
                &a.risk_profile,
                c.risk_profiles.contains_key(&a.risk_profile),
            ),
            (
                "runtime_profile",
                "runtime profile",
                "runtime_profiles",
                &a.runtime_profile,
                c.runtime_profiles.contains_key(&a.runtime_profile),
            ),
        ];
        for (key, what, table, value, known) in references {
            if !known {
                v.push(Problem::new(
                    at(key),
                    format!("unknown {what} '{value}'; define [{table}.{value}]"),
                ));
            }
        }
        for (i, ch) in a.channels.iter().enumerate() {
            if !c.channels.knows(ch) {
                v.push(Problem::new(
                    format!("{}[{i}]", at("channels")),
                    format!("unknown channel '{ch}'; configure [channels.<kind>.<alias>] for it"),
                ));
            }
        }
        for (i, d) in a.delegates.iter().enumerate() {
            let path = format!("{}[{i}]", at("delegates"));
            if d.agent() == name {
                v.push(Problem::new(path, "an agent cannot delegate to itself"));
            } else if !c.agents.contains_key(d.agent()) {
                v.push(Problem::new(path, format!("unknown agent '{}'", d.agent())));
            }
        }
        for (i, r) in a.workspace.read_memory_from.iter().enumerate() {
            if !c.agents.contains_key(r) {
                v.push(Problem::new(
                    format!("{}[{i}]", at("workspace.read_memory_from")),
                    format!("unknown agent '{r}'"),
                ));
            }
        }
        skills::skills_dir(&at("skills_dir"), &a.skills_dir, v);
        subagents(c, &at, &a.subagents, v);
    }
}

/// `[agents.<a>.subagents]`: the agents it may spawn, its limits, model
/// and tool lists (`at` makes a key's path under the agent).
fn subagents(c: &Config, at: &dyn Fn(&str) -> String, s: &crate::SubagentsConfig, v: &mut Vec<Problem>) {
    for (i, r) in s.allow_agents.iter().enumerate() {
        if r != "*" && !c.agents.contains_key(r) {
            v.push(Problem::new(
                format!("{}[{i}]", at("subagents.allow_agents")),
                format!("unknown agent '{r}'; use an agent alias or \"*\""),
            ));
        }
    }
    if !(1..=5).contains(&s.max_spawn_depth) {
        v.push(Problem::new(
            at("subagents.max_spawn_depth"),
            format!("{} is out of range; use 1 to 5", s.max_spawn_depth),
        ));
    }
    if !(1..=20).contains(&s.max_children_per_agent) {
        v.push(Problem::new(
            at("subagents.max_children_per_agent"),
            format!("{} is out of range; use 1 to 20", s.max_children_per_agent),
        ));
    }
    if let Some(m) = &s.model
        && !c.providers.contains_key(m)
    {
        v.push(Problem::new(at("subagents.model"), format!("unknown provider '{m}'")));
    }
    tool_names(c, &at("subagents.tools.deny"), &s.tools.deny, v);
    tool_names(c, &at("subagents.tools.allow"), &s.tools.allow, v);
}

fn tool_names(c: &Config, path: &str, names: &[String], v: &mut Vec<Problem>) {
    for (i, t) in names.iter().enumerate() {
        if BUILTIN_TOOLS.contains(&t.as_str()) {
            continue;
        }
        // An MCP tool: its server must be configured (its tools are only
        // known once it runs).
        if let Some((server, tool)) = t.split_once('.')
            && !tool.is_empty()
        {
            if c.mcp_servers.contains_key(server) {
                continue;
            }
            v.push(Problem::new(
                format!("{path}[{i}]"),
                format!("'{t}' names the MCP server '{server}', which is not configured; add [mcp_servers.{server}] or remove the entry"),
            ));
            continue;
        }
        v.push(Problem::new(
            format!("{path}[{i}]"),
            format!(
                "unknown tool '{t}'; known tools: {} (MCP tools as server.tool or server.*)",
                BUILTIN_TOOLS.join(", ")
            ),
        ));
    }
}

/// `tg:<digits>`, `discord:<digits>`, `@user:server`, `cli:<login>`.
pub(crate) fn valid_user_id(u: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    if let Some(rest) = u.strip_prefix("tg:") {
        return digits(rest);
    }
    if let Some(rest) = u.strip_prefix("discord:") {
        return digits(rest);
    }
    if let Some(rest) = u.strip_prefix("cli:") {
        return !rest.is_empty();
    }
    if let Some(rest) = u.strip_prefix('@') {
        return rest
            .split_once(':')
            .is_some_and(|(l, s)| !l.is_empty() && !s.is_empty());
    }
    false
}

const USER_FORMS: &str = "use tg:<numeric id>, discord:<snowflake>, @user:server or cli:<login>";

fn user_list(path: &str, users: &[String], star_ok: bool, v: &mut Vec<Problem>) {
    for (i, u) in users.iter().enumerate() {
        if (star_ok && (u == "*" || u == "paired")) || valid_user_id(u) {
            continue;
        }
        v.push(Problem::new(
            format!("{path}[{i}]"),
            format!(
                "'{u}' is not a user id; {USER_FORMS}{}",
                if star_ok {
                    ", or \"*\" (anyone) or \"paired\" (people an approver let in)"
                } else {
                    ""
                }
            ),
        ));
    }
}

/// `agents.<a>.models`: providers `/model` may switch to must exist.
fn agent_models(c: &Config, v: &mut Vec<Problem>) {
    for (name, a) in &c.agents {
        for (i, m) in a.models.iter().enumerate() {
            if !c.providers.contains_key(m) {
                v.push(Problem::new(
                    format!("agents.{name}.models[{i}]"),
                    format!("unknown provider '{m}'; define [providers.{m}]"),
                ));
            }
        }
        if let Some(m) = &a.compaction_provider
            && !c.providers.contains_key(m)
        {
            v.push(Problem::new(
                format!("agents.{name}.compaction_provider"),
                format!("unknown provider '{m}'; define [providers.{m}] or remove the key to use the agent's model"),
            ));
        }
    }
}

fn risk_profiles(c: &Config, v: &mut Vec<Problem>) {
    for (name, r) in &c.risk_profiles {
        let at = |k: &str| format!("risk_profiles.{name}.{k}");
        tool_names(c, &at("allowed_tools"), &r.allowed_tools, v);
        tool_names(c, &at("excluded_tools"), &r.excluded_tools, v);
        tool_names(c, &at("auto_approve"), &r.auto_approve, v);
        tool_names(c, &at("always_ask"), &r.always_ask, v);
        let Some(route) = &r.approval_route else {
            continue;
        };
        if let Some(ch) = &route.approver_channel
            && !c.channels.knows(ch)
        {
            v.push(Problem::new(
                at("approval_route.approver_channel"),
                format!("unknown channel '{ch}'; configure [channels.<kind>.<alias>] for it"),
            ));
        }
        if route.approver_channel.is_some() && route.approver_recipient.is_none() {
            v.push(Problem::new(
                at("approval_route.approver_recipient"),
                "missing: name the chat or room where prompts go",
            ));
        }
        if route.approver_channel.is_some() && route.approvers.is_empty() {
            v.push(Problem::new(
                at("approval_route.approvers"),
                "empty: list who may decide (nobody could approve)",
            ));
        }
        user_list(&at("approval_route.approvers"), &route.approvers, false, v);
        if route.timeout_secs == 0 {
            v.push(Problem::new(at("approval_route.timeout_secs"), "must be at least 1"));
        }
    }
}

fn runtime_profiles(c: &Config, v: &mut Vec<Problem>) {
    for (name, r) in &c.runtime_profiles {
        let at = |k: &str| format!("runtime_profiles.{name}.{k}");
        if r.max_tool_iterations == 0 {
            v.push(Problem::new(at("max_tool_iterations"), "must be at least 1"));
        }
        if r.max_execution_tree_iterations == Some(0) {
            v.push(Problem::new(
                at("max_execution_tree_iterations"),
                "0 is invalid; omit it for no tree budget or use at least 1",
            ));
        }
        for (key, val) in [
            ("delegation_timeout_secs", r.delegation_timeout_secs),
            ("agentic_timeout_secs", r.agentic_timeout_secs),
        ] {
            if val == 0 {
                v.push(Problem::new(at(key), "must be at least 1"));
            }
        }
    }
}

fn lanes(c: &Config, v: &mut Vec<Problem>) {
    if !(1..=256).contains(&c.lanes.subagent.max_concurrent) {
        v.push(Problem::new("lanes.subagent.max_concurrent", "use 1 to 256"));
    }
}

fn cost(c: &Config, v: &mut Vec<Problem>) {
    for (key, val) in [
        ("daily_limit_usd", c.cost.daily_limit_usd),
        ("monthly_limit_usd", c.cost.monthly_limit_usd),
    ] {
        // NaN fails this too.
        if val.is_nan() || val < 0.0 {
            v.push(Problem::new(format!("cost.{key}"), "must be 0 or more"));
        }
    }
    for (key, price) in &c.cost.prices {
        let known = c.providers.contains_key(key) || c.providers.values().any(|p| &p.model == key);
        if !known {
            v.push(Problem::new(
                format!("cost.prices.{key}"),
                format!("'{key}' names no provider and no provider's model"),
            ));
        }
        if price.input < 0.0 || price.output < 0.0 {
            v.push(Problem::new(format!("cost.prices.{key}"), "prices must be 0 or more"));
        }
    }
}

fn channels(c: &Config, v: &mut Vec<Problem>) {
    web::web(c, v);
    web::local(c, v);
    web::telemetry(c, v);
    platforms::telegram(c, v);
    platforms::discord(c, v);
    platforms::matrix(c, v);
}

fn cron(c: &Config, v: &mut Vec<Problem>) {
    let mut seen = std::collections::HashSet::new();
    for (i, job) in c.cron.iter().enumerate() {
        let at = |k: &str| format!("cron[{i}].{k}");
        if job.id.trim().is_empty() {
            v.push(Problem::new(at("id"), "must not be empty"));
        } else if !seen.insert(job.id.as_str()) {
            v.push(Problem::new(at("id"), format!("duplicate cron id '{}'", job.id)));
        }
        if let Err(e) = Cron::from_str(&job.schedule) {
            v.push(Problem::new(
                at("schedule"),
                format!(
                    "'{}' is not a cron expression ({e}); use five fields like \"0 6 * * *\"",
                    job.schedule
                ),
            ));
        }
        match c.agents.get(&job.agent) {
            None => v.push(Problem::new(at("agent"), format!("unknown agent '{}'", job.agent))),
            Some(a) if !a.enabled => v.push(Problem::new(at("agent"), format!("agent '{}' is disabled", job.agent))),
            Some(_) => {}
        }
        if let Some(raw) = &job.deliver_to {
            match job.delivery() {
                Some((ch, chat)) if c.channels.knows(ch) && !chat.is_empty() => {}
                _ => v.push(Problem::new(
                    at("deliver_to"),
                    format!("'{raw}' must be <configured channel>:<chat>, e.g. matrix.main:!ops:example.org"),
                )),
            }
        }
    }
}
