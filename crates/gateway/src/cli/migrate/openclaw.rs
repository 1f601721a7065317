//! Reading an OpenClaw home (`~/.openclaw`): `openclaw.json` (JSON5) and
//! its `.env`, the workspace's persona and memory files, and skills.
//! Keys as OpenClaw documents them (docs.openclaw.ai, configuration
//! reference); older spellings it still reads are read too.

use super::common::{self, AGENT, PROFILE};
use super::plan::{Plan, list, q};
use super::source::{Source, dotenv, with_process_env};
use serde_json::Value;
use std::path::{Path, PathBuf};

pub(super) fn plan(home: &Path) -> Result<Plan, String> {
    let path = home.join("openclaw.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let root = super::json5::to_json(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut env = dotenv(&home.join(".env"));
    if let Some(vars) = root.pointer("/env/vars").and_then(Value::as_object) {
        for (k, v) in vars {
            if let Some(v) = v.as_str() {
                env.entry(k.clone()).or_insert_with(|| v.to_string());
            }
        }
    }
    let mut s = Source::new(root, with_process_env(env));
    let mut plan = Plan::default();
    s.get(&["env"]);
    let provider = model(&mut s, &mut plan);
    let workspace = workspace(&mut s, home);
    let prompt = common::persona(&mut plan, &workspace, &["SOUL.md", "AGENTS.md"]);
    let prompt = common::memory(
        &mut plan,
        &[workspace.join("MEMORY.md"), workspace.join("USER.md")],
        prompt,
    );
    common::agent(&mut plan, &provider, &prompt);
    other_agents(&mut s, &mut plan);
    let approvers = owners(&mut s);
    telegram(&mut s, &mut plan, home, &approvers);
    discord(&mut s, &mut plan, &approvers);
    matrix(&mut s, &mut plan, &approvers);
    mcp(&mut s, &mut plan);
    exec(&mut s, &mut plan, home);
    common::skills(&mut plan, &home.join("skills"));
    common::skills(&mut plan, &workspace.join("skills"));
    common::check_pairing(&mut plan);
    for key in s.unread() {
        plan.left(key, "no Switchboard equivalent this migration knows");
    }
    Ok(plan)
}

/// The default model and its provider, and its fallbacks (each a
/// provider of its own, listed in the first one's `fallbacks`); the
/// provider's name.
fn model(s: &mut Source, plan: &mut Plan) -> String {
    let chosen = match s.get(&["agents", "defaults", "model"]) {
        Some(Value::String(m)) => Some(m),
        Some(Value::Object(o)) => o.get("primary").and_then(Value::as_str).map(str::to_string),
        _ => s.str(&["defaultModel"]),
    };
    let Some(chosen) = chosen else {
        plan.left(
            "agents.defaults.model",
            "no default model: set [providers.main] by hand",
        );
        common::provider(
            plan,
            "main",
            "openai",
            Some("http://127.0.0.1:11434/v1"),
            "qwen2.5:7b",
            None,
        );
        return "main".into();
    };
    let primary = provider_for(s, plan, &chosen, "agents.defaults.model");
    let fallbacks = common::strings(s.get(&["agents", "defaults", "model", "fallbacks"]));
    let names: Vec<String> = fallbacks
        .iter()
        .enumerate()
        .map(|(i, f)| provider_for(s, plan, f, &format!("agents.defaults.model.fallbacks[{i}]")))
        .collect();
    common::fallbacks(plan, &primary, &names);
    primary
}

/// A provider table for `chosen` (`provider/model`, or an alias from
/// `agents.defaults.models`); its name.
fn provider_for(s: &mut Source, plan: &mut Plan, chosen: &str, from: &str) -> String {
    let aliases = s.get(&["agents", "defaults", "models"]).unwrap_or_default();
    let chosen = aliases
        .as_object()
        .and_then(|o| {
            o.iter()
                .find(|(_, v)| v.get("alias").and_then(Value::as_str) == Some(chosen))
        })
        .map_or(chosen.to_string(), |(full, _)| full.clone());
    let (id, model) = chosen.split_once('/').unwrap_or(("openai", chosen.as_str()));
    let (id, model) = (id.to_string(), model.to_string());
    let name = common::free_provider_name(plan, &id);
    let custom = s.get(&["models", "providers", &id]);
    let table = custom.as_ref().and_then(Value::as_object);
    let base = table
        .and_then(|t| t.get("baseUrl"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let kind = match table.and_then(|t| t.get("api")).and_then(Value::as_str) {
        Some("anthropic-messages") => "anthropic",
        Some("google-generative-ai") => {
            plan.left(
                format!("models.providers.{id}.api"),
                "Google's API is not spoken here: use an OpenAI-compatible address",
            );
            "openai"
        }
        _ => "openai",
    };
    let from = format!("{from} ({chosen})");
    match (table, common::known_provider(&id)) {
        (Some(t), _) => {
            let key = t.get("apiKey").and_then(|raw| {
                s.secret(
                    plan,
                    &format!("models.providers.{id}.apiKey"),
                    raw,
                    &format!("{id}_API_KEY"),
                )
            });
            common::provider(plan, &name, kind, base.as_deref(), &model, key);
        }
        (None, Some((kind, base, key_env))) => {
            let key = key_env.map(|var| common::key_in_env(plan, s, var));
            common::provider(plan, &name, kind, base, &model, key);
        }
        (None, None) => {
            plan.left(
                &from,
                format!("the provider '{id}' is not one this migration knows: set [providers.{name}].base_url by hand"),
            );
            common::provider(plan, &name, "openai", None, &model, None);
        }
    }
    plan.mapped(from, format!("[providers.{name}] model {model}"));
    name
}

/// The workspace folder (persona, memory, skills).
fn workspace(s: &mut Source, home: &Path) -> PathBuf {
    match s.str(&["agents", "defaults", "workspace"]) {
        Some(w) if w.starts_with("~/") => std::env::var("HOME")
            .map(|h| Path::new(&h).join(&w[2..]))
            .unwrap_or_else(|_| PathBuf::from(w)),
        Some(w) => PathBuf::from(w),
        None => home.join("workspace"),
    }
}

/// `commands.ownerAllowFrom` (`telegram:123`): the approvers, by platform.
fn owners(s: &mut Source) -> Vec<String> {
    common::strings(s.get(&["commands", "ownerAllowFrom"]))
}

/// The owners on `platform`, as Switchboard ids.
fn owners_on(owners: &[String], platform: &str, prefix: &str) -> Vec<String> {
    let on: Vec<String> = owners
        .iter()
        .filter(|o| o.starts_with(&format!("{platform}:")))
        .cloned()
        .collect();
    common::ids(&on, prefix, &[platform])
}

/// Approvals to the first owner's direct chat (an ops room is named later).
fn approvals_to(plan: &mut Plan, channel: &str, approvers: &[String]) {
    let Some(first) = approvers.first() else { return };
    let header = format!("{PROFILE}.approval_route");
    plan.set(&header, "approver_channel", q(channel));
    let chat = first.split_once(':').map_or(first.as_str(), |(_, id)| id);
    plan.set(&header, "approver_recipient", q(chat));
    plan.set(&header, "approvers", list(approvers));
    plan.mapped(
        "commands.ownerAllowFrom",
        format!("approvers on {channel}, asked in a direct chat (name an ops room later)"),
    );
}

fn telegram(s: &mut Source, plan: &mut Plan, home: &Path, owners: &[String]) {
    let base = ["channels", "telegram"];
    if s.keys(&base).is_empty() || s.get(&["channels", "telegram", "enabled"]) == Some(Value::Bool(false)) {
        return;
    }
    let raw = s
        .get(&["channels", "telegram", "botToken"])
        .or_else(|| s.get(&["channels", "telegram", "accounts", "default", "botToken"]))
        .unwrap_or_else(|| Value::String("${TELEGRAM_BOT_TOKEN}".into()));
    let Some(token) = s.secret(plan, "channels.telegram.botToken", &raw, "TELEGRAM_BOT_TOKEN") else {
        return;
    };
    let table = "channels.telegram.main";
    plan.set(table, "bot_token", token);
    let mut allow = common::strings(s.get(&["channels", "telegram", "allowFrom"]));
    let paired = home.join("credentials/telegram-default-allowFrom.json");
    if let Some(more) = std::fs::read_to_string(&paired)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
    {
        let more = common::strings(more.get("allowFrom").cloned());
        plan.mapped(
            paired.display().to_string(),
            format!("people let in by pairing there ({}), kept in allowed_users", more.len()),
        );
        allow.extend(more);
    }
    let policy = s
        .str(&["channels", "telegram", "dmPolicy"])
        .unwrap_or_else(|| "pairing".into());
    let ids = common::ids(&allow, "tg", &["telegram"]);
    let users = common::allowed_users(plan, "channels.telegram.dmPolicy + allowFrom", &policy, &ids);
    plan.set(table, "allowed_users", list(&users));
    mention(s, plan, &["channels", "telegram"], table);
    group_rules(s, plan, "telegram");
    common::answer_on(plan, "telegram.main");
    approvals_to(plan, "telegram.main", &owners_on(owners, "telegram", "tg"));
}

/// Rules for groups that Switchboard writes per bot and per person, not
/// per group: each is reported with what to do instead (never widened
/// into the direct-chat allow list).
fn group_rules(s: &mut Source, plan: &mut Plan, platform: &str) {
    let base = ["channels", platform];
    if let Some(ids) = s.get(&[base[0], base[1], "groupAllowFrom"]) {
        plan.left(
            format!("channels.{platform}.groupAllowFrom ({})", common::strings(Some(ids)).join(", ")),
            "allowed_users is one list for direct chats and groups: add these ids to it if they may also write to the bot directly",
        );
    }
    if let Some(policy) = s.str(&[base[0], base[1], "groupPolicy"]) {
        plan.left(
            format!("channels.{platform}.groupPolicy ({policy})"),
            "in a group, the people in allowed_users are answered (when they mention the bot, with require_mention_in_groups)",
        );
    }
    for group in s.keys(&[base[0], base[1], "groups"]).into_iter().filter(|g| g != "*") {
        s.get(&[base[0], base[1], "groups", &group]);
        plan.left(
            format!("channels.{platform}.groups.{group}"),
            "rules for one group: the mention rule is per bot here (require_mention_in_groups), and a group's own prompt or skills would be a second agent routed to it",
        );
    }
}

/// Agents of a roster other than the default one (`agents.entries` or
/// the older `agents.list`): one agent is migrated.
fn other_agents(s: &mut Source, plan: &mut Plan) {
    let mut ids = s.keys(&["agents", "entries"]);
    if let Some(Value::Array(list)) = s.get(&["agents", "list"]) {
        ids.extend(list.iter().filter_map(|a| a.get("id")?.as_str().map(str::to_string)));
    }
    let others: Vec<String> = ids.into_iter().filter(|id| id != "main").collect();
    for id in &others {
        s.get(&["agents", "entries", id]);
    }
    if !others.is_empty() {
        plan.left(
            format!("agents ({})", others.join(", ")),
            "only the default agent is migrated, as agents.main: add each other one as [agents.<id>] with its own channels or routes",
        );
    }
}

/// `groups."*".requireMention` (or the old flat `requireMention`).
fn mention(s: &mut Source, plan: &mut Plan, base: &[&str], table: &str) {
    let mut path: Vec<&str> = base.to_vec();
    path.extend(["groups", "*", "requireMention"]);
    let mut flat: Vec<&str> = base.to_vec();
    flat.push("requireMention");
    if let Some(Value::Bool(b)) = s.get(&path).or_else(|| s.get(&flat)) {
        plan.set(table, "require_mention_in_groups", b.to_string());
        plan.mapped(path.join("."), format!("[{table}].require_mention_in_groups"));
    }
}

fn discord(s: &mut Source, plan: &mut Plan, owners: &[String]) {
    if s.keys(&["channels", "discord"]).is_empty()
        || s.get(&["channels", "discord", "enabled"]) == Some(Value::Bool(false))
    {
        return;
    }
    let raw = s
        .get(&["channels", "discord", "token"])
        .unwrap_or_else(|| Value::String("${DISCORD_BOT_TOKEN}".into()));
    let Some(token) = s.secret(plan, "channels.discord.token", &raw, "DISCORD_BOT_TOKEN") else {
        return;
    };
    let table = "channels.discord.main";
    plan.set(table, "bot_token", token);
    let guilds = s.keys(&["channels", "discord", "guilds"]);
    if !guilds.is_empty() {
        plan.set(table, "guilds", list(&guilds));
        plan.mapped("channels.discord.guilds", format!("[{table}].guilds"));
        s.get(&["channels", "discord", "guilds"]);
    }
    let policy = s
        .str(&["channels", "discord", "dmPolicy"])
        .or_else(|| s.str(&["channels", "discord", "dm", "policy"]))
        .unwrap_or_else(|| "pairing".into());
    let mut allow = common::strings(s.get(&["channels", "discord", "allowFrom"]));
    allow.extend(common::strings(s.get(&["channels", "discord", "dm", "allowFrom"])));
    let ids = common::ids(&allow, "discord", &[]);
    let users = common::allowed_users(plan, "channels.discord.dmPolicy + allowFrom", &policy, &ids);
    plan.set(table, "allowed_users", list(&users));
    common::answer_on(plan, "discord.main");
    approvals_to(plan, "discord.main", &owners_on(owners, "discord", "discord"));
}

fn matrix(s: &mut Source, plan: &mut Plan, owners: &[String]) {
    if s.keys(&["channels", "matrix"]).is_empty()
        || s.get(&["channels", "matrix", "enabled"]) == Some(Value::Bool(false))
    {
        return;
    }
    let table = "channels.matrix.main";
    let homeserver = s
        .str(&["channels", "matrix", "homeserver"])
        .or_else(|| s.env("MATRIX_HOMESERVER"));
    let user = s
        .str(&["channels", "matrix", "userId"])
        .or_else(|| s.env("MATRIX_USER_ID"));
    let (Some(homeserver), Some(user)) = (homeserver, user) else {
        plan.left(
            "channels.matrix",
            "no homeserver or userId: add [channels.matrix.main] by hand",
        );
        return;
    };
    plan.set(table, "homeserver", q(&homeserver));
    plan.set(table, "user_id", q(&user));
    plan.mapped("channels.matrix.homeserver + userId", format!("[{table}]"));
    if let Some(raw) = s.get(&["channels", "matrix", "accessToken"]) {
        if let Some(t) = s.secret(plan, "channels.matrix.accessToken", &raw, "MATRIX_ACCESS_TOKEN") {
            plan.set(table, "access_token", t);
        }
    } else {
        let raw = s
            .get(&["channels", "matrix", "password"])
            .unwrap_or_else(|| Value::String("${MATRIX_PASSWORD}".into()));
        if let Some(t) = s.secret(plan, "channels.matrix.password", &raw, "MATRIX_PASSWORD") {
            plan.set(table, "password", t);
        }
    }
    let policy = s
        .str(&["channels", "matrix", "dm", "policy"])
        .unwrap_or_else(|| "pairing".into());
    let ids = common::strings(s.get(&["channels", "matrix", "dm", "allowFrom"]));
    let users = common::allowed_users(plan, "channels.matrix.dm.policy + allowFrom", &policy, &ids);
    plan.set(table, "allowed_users", list(&users));
    let rooms = s.keys(&["channels", "matrix", "groups"]);
    if !rooms.is_empty() {
        plan.set(table, "auto_join", list(&rooms));
        plan.mapped("channels.matrix.groups", format!("[{table}].auto_join"));
        s.get(&["channels", "matrix", "groups"]);
    }
    common::answer_on(plan, "matrix.main");
    let approvers: Vec<String> = owners
        .iter()
        .filter_map(|o| o.strip_prefix("matrix:"))
        .map(str::to_string)
        .collect();
    approvals_to(plan, "matrix.main", &approvers);
}

fn mcp(s: &mut Source, plan: &mut Plan) {
    let mut names = Vec::new();
    for name in s.keys(&["mcp", "servers"]) {
        let Some(server) = s.get(&["mcp", "servers", &name]) else {
            continue;
        };
        if super::servers::server(s, plan, &format!("mcp.servers.{name}"), &name, &server) {
            names.push(name);
        }
    }
    if !names.is_empty() {
        plan.set(AGENT, "mcp_servers", list(&names));
    }
}

/// `tools.exec` (and the older `security`/`ask` pair): the risk level
/// and the commands allowed.
fn exec(s: &mut Source, plan: &mut Plan, home: &Path) {
    let mode = s.str(&["tools", "exec", "mode"]).or_else(|| {
        let security = s.str(&["tools", "exec", "security"])?;
        let ask = s.str(&["tools", "exec", "ask"]).unwrap_or_else(|| "off".into());
        Some(match (security.as_str(), ask.as_str()) {
            ("deny", _) => "deny".into(),
            ("full", _) => "full".into(),
            (_, "off") => "allowlist".into(),
            _ => "ask".into(),
        })
    });
    let mut bins = common::strings(s.get(&["tools", "exec", "safeBins"]));
    bins.extend(approved_always(plan, home));
    bins.sort();
    bins.dedup();
    if !bins.is_empty() {
        plan.set(PROFILE, "allowed_commands", list(&bins));
    }
    let Some(mode) = mode else { return };
    let (level, note) = match mode.as_str() {
        "deny" => ("read_only", "no commands"),
        "full" => ("full", "commands run without asking"),
        _ => (
            "supervised",
            "the allowed commands; anything else is asked of an approver",
        ),
    };
    plan.set(PROFILE, "level", q(level));
    plan.mapped(
        format!("tools.exec ({mode})"),
        format!("[{PROFILE}] level {level}: {note}"),
    );
}

/// The commands approved "always" in `exec-approvals.json` (each agent's
/// `allowlist[].pattern`): a plain command name or an executable's path
/// becomes an allowed command; a glob, or an entry that also limits the
/// arguments (`argPattern`), is reported instead (here a command is
/// allowed by name with any arguments, which would allow more).
fn approved_always(plan: &mut Plan, home: &Path) -> Vec<String> {
    let path = home.join("exec-approvals.json");
    let Some(file) = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| super::json5::to_json(&t).ok())
    else {
        return Vec::new();
    };
    let mut names = Vec::new();
    let agents = file
        .get("agents")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for (agent, rules) in agents {
        // One agent is migrated: another's approvals are not its to have,
        // and a list left under `security: deny` allows nothing.
        let security = rules
            .get("security")
            .or_else(|| file.pointer("/defaults/security"))
            .and_then(Value::as_str)
            .unwrap_or("full");
        if agent != "main" || security == "deny" {
            if rules
                .get("allowlist")
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty())
            {
                plan.left(
                    format!("exec-approvals.json agents.{agent}.allowlist"),
                    format!("not the default agent's, or under security \"{security}\": not given to agents.main"),
                );
            }
            continue;
        }
        let entries = rules
            .get("allowlist")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for (i, entry) in entries.iter().enumerate() {
            let from = format!("exec-approvals.json agents.{agent}.allowlist[{i}]");
            let pattern = entry.get("pattern").and_then(Value::as_str).unwrap_or_default();
            let name = pattern.rsplit('/').next().unwrap_or_default();
            let plain = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+'));
            if entry.get("argPattern").is_some() {
                plan.left(
                    from,
                    format!("'{pattern}' is approved only with certain arguments; allowed_commands allows any: add it by hand if that is meant"),
                );
            } else if plain {
                plan.mapped(from, format!("allowed_commands: {name} (approved always)"));
                names.push(name.to_string());
            } else {
                plan.left(
                    from,
                    format!(
                        "'{pattern}' is a pattern, not a command name: list the commands it meant in allowed_commands"
                    ),
                );
            }
        }
    }
    names
}
