//! Reading a Hermes Agent home (`~/.hermes`): `config.yaml`, `.env` (where
//! Hermes keeps tokens and allow lists), `SOUL.md`, `memories/` and
//! `skills/`. Keys as Hermes documents them (its configuration, providers,
//! messaging and MCP pages).

use super::common::{self, AGENT, PROFILE};
use super::plan::{Plan, list, q};
use super::source::{Source, dotenv, with_process_env};
use serde_json::Value;
use std::path::Path;

pub(super) fn plan(home: &Path) -> Result<Plan, String> {
    let path = home.join("config.yaml");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let root: Value = if text.trim().is_empty() {
        Value::Object(Default::default())
    } else {
        serde_yaml::from_str(&text).map_err(|e| format!("{}: not YAML this reader knows: {e}", path.display()))?
    };
    let mut s = Source::new(root, with_process_env(dotenv(&home.join(".env"))));
    let mut plan = Plan::default();
    let provider = model(&mut s, &mut plan);
    let prompt = common::persona(&mut plan, home, &["SOUL.md"]);
    let prompt = common::memory(
        &mut plan,
        &[home.join("memories/MEMORY.md"), home.join("memories/USER.md")],
        prompt,
    );
    common::agent(&mut plan, &provider, &prompt);
    let everyone = common::strings(s.env("GATEWAY_ALLOWED_USERS").map(Value::String));
    telegram(&mut s, &mut plan, home, &everyone);
    discord(&mut s, &mut plan, &everyone);
    matrix(&mut s, &mut plan, &everyone);
    for name in s.keys(&["mcp_servers"]) {
        if let Some(server) = s.get(&["mcp_servers", &name])
            && super::servers::server(&s, &mut plan, &format!("mcp_servers.{name}"), &name, &server)
        {
            let mut names = common::current_list(&plan, "mcp_servers");
            names.push(name);
            plan.set(AGENT, "mcp_servers", list(&names));
        }
    }
    approvals(&mut s, &mut plan);
    common::skills(&mut plan, &home.join("skills"));
    common::check_pairing(&mut plan);
    for key in s.unread() {
        plan.left(key, "no Switchboard equivalent this migration knows");
    }
    Ok(plan)
}

/// `model:` (a string `provider/model`, or `{provider, default|model,
/// base_url, api_key}`), with `custom:<name>` read from `custom_providers`,
/// and its fallbacks (`fallback_providers`, or the older `fallback_model`).
fn model(s: &mut Source, plan: &mut Plan) -> String {
    let (provider, name, base, key) = match s.get(&["model"]) {
        Some(Value::String(m)) => match m.split_once('/') {
            Some((p, n)) => (p.to_string(), n.to_string(), None, None),
            None => ("openai".to_string(), m, None, None),
        },
        Some(Value::Object(o)) => {
            let get = |k: &str| o.get(k).and_then(Value::as_str).map(str::to_string);
            (
                get("provider").unwrap_or_else(|| "custom".into()),
                get("default").or_else(|| get("model")).unwrap_or_default(),
                get("base_url"),
                o.get("api_key").cloned(),
            )
        }
        _ => {
            let name = s
                .env("LLM_MODEL")
                .or_else(|| s.env("HERMES_MODEL"))
                .unwrap_or_else(|| "qwen2.5:7b".into());
            ("custom".to_string(), name, s.env("OPENAI_BASE_URL"), None)
        }
    };
    let from = format!("model ({provider}, {name})");
    let primary = provider_for(
        s,
        plan,
        Wanted {
            provider: &provider,
            model: &name,
            base,
            key,
        },
        &from,
    );
    let mut listed = s
        .get(&["fallback_providers"])
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default();
    listed.extend(s.get(&["fallback_model"]).filter(Value::is_object));
    let mut names = Vec::new();
    for (i, f) in listed.iter().enumerate() {
        let get = |k: &str| f.get(k).and_then(Value::as_str).map(str::to_string);
        let (Some(provider), Some(model)) = (get("provider"), get("model")) else {
            plan.left(
                format!("fallback_providers[{i}]"),
                "no provider or model: add it by hand",
            );
            continue;
        };
        let key = get("api_key_env").map(|var| Value::String(format!("${{{var}}}")));
        let wanted = Wanted {
            provider: &provider,
            model: &model,
            base: get("base_url"),
            key,
        };
        let from = format!("fallback_providers[{i}] ({provider}, {model})");
        names.push(provider_for(s, plan, wanted, &from));
    }
    common::fallbacks(plan, &primary, &names);
    primary
}

/// A model as Hermes names one: its provider (`custom:<name>` for one of
/// `custom_providers`), the model, and an address or key when given.
struct Wanted<'a> {
    provider: &'a str,
    model: &'a str,
    base: Option<String>,
    key: Option<Value>,
}

/// A provider table for `w`; its name.
fn provider_for(s: &mut Source, plan: &mut Plan, w: Wanted<'_>, from: &str) -> String {
    let Wanted {
        provider,
        model: name,
        base,
        key,
    } = w;
    let id = provider.strip_prefix("custom:").unwrap_or(provider).to_string();
    let table = common::free_provider_name(plan, &id);
    if let Some(custom) = provider.strip_prefix("custom:") {
        let entries = s.get(&["custom_providers"]).unwrap_or_default();
        let entry = entries
            .as_array()
            .into_iter()
            .flatten()
            .find(|e| e.get("name").and_then(Value::as_str) == Some(custom));
        let Some(entry) = entry else {
            plan.left(
                from,
                format!("custom_providers has no '{custom}': set [providers.{table}] by hand"),
            );
            common::provider(plan, &table, "openai", None, name, None);
            return table;
        };
        let url = entry.get("base_url").and_then(Value::as_str);
        let kind = if entry.get("api_mode").and_then(Value::as_str) == Some("anthropic_messages") {
            "anthropic"
        } else {
            "openai"
        };
        let key = match (entry.get("key_env").and_then(Value::as_str), entry.get("api_key")) {
            (Some(var), _) => {
                plan.secret(format!("custom_providers.{custom}.key_env"), var, s.env(var));
                Some(q(&format!("env:{var}")))
            }
            (None, Some(raw)) => s.secret(
                plan,
                &format!("custom_providers.{custom}.api_key"),
                raw,
                &format!("{}_API_KEY", custom.to_ascii_uppercase()),
            ),
            _ => None,
        };
        common::provider(plan, &table, kind, url, name, key);
    } else if let Some((kind, known_base, key_env)) = common::known_provider(&id) {
        let key = match (key, key_env) {
            (Some(raw), _) => s.secret(
                plan,
                &format!("{from} key"),
                &raw,
                &format!("{}_API_KEY", id.to_ascii_uppercase()),
            ),
            (None, Some(var)) => Some(common::key_in_env(plan, s, var)),
            (None, None) => None,
        };
        common::provider(plan, &table, kind, base.as_deref().or(known_base), name, key);
    } else if let Some(url) = base.as_deref() {
        let key = key.and_then(|raw| s.secret(plan, "model.api_key", &raw, "MODEL_API_KEY"));
        common::provider(plan, &table, "openai", Some(url), name, key);
    } else {
        plan.left(
            from,
            format!("the provider '{id}' is not one this migration knows: set [providers.{table}].base_url by hand"),
        );
        common::provider(plan, &table, "openai", None, name, None);
    }
    plan.mapped(from, format!("[providers.{table}] model {name}"));
    table
}

/// A platform's allow list: `<P>_ALLOWED_USERS`, the YAML `allow_from`,
/// Hermes's pairing store, and `GATEWAY_ALLOWED_USERS`.
fn allowed(s: &mut Source, home: &Path, platform: &str, everyone: &[String]) -> Vec<String> {
    let mut ids = common::strings(
        s.env(&format!("{}_ALLOWED_USERS", platform.to_ascii_uppercase()))
            .map(Value::String),
    );
    ids.extend(common::strings(s.get(&[platform, "allow_from"])));
    ids.extend(everyone.iter().cloned());
    let store = home.join(format!("pairing/{platform}-approved.json"));
    if let Some(v) = std::fs::read_to_string(&store)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
    {
        let found: Vec<String> = match &v {
            Value::Object(o) => o.keys().cloned().collect(),
            other => common::strings(Some(other.clone())),
        };
        ids.extend(found);
    }
    ids.sort();
    ids.dedup();
    ids
}

/// The policy: the YAML `dm_policy`, else an allow list if there is one,
/// else pairing when `unauthorized_dm_behavior` is `pair`, else nobody
/// (Hermes denies everyone without an allow list).
fn policy(s: &mut Source, platform: &str, ids: &[String]) -> String {
    if let Some(p) = s.str(&[platform, "dm_policy"]) {
        return p;
    }
    let pair = s
        .str(&[platform, "unauthorized_dm_behavior"])
        .or_else(|| s.str(&["unauthorized_dm_behavior"]));
    match (pair.as_deref(), ids.is_empty()) {
        (Some("pair"), _) => "pairing".into(),
        (_, false) => "allowlist".into(),
        _ => "disabled".into(),
    }
}

fn enabled(s: &mut Source, platform: &str) -> bool {
    s.get(&["platforms", platform, "enabled"]) != Some(Value::Bool(false))
}

fn mention(s: &mut Source, plan: &mut Plan, platform: &str, table: &str) {
    if let Some(Value::Bool(b)) = s.get(&[platform, "require_mention"]) {
        plan.set(table, "require_mention_in_groups", b.to_string());
        plan.mapped(
            format!("{platform}.require_mention"),
            format!("[{table}].require_mention_in_groups"),
        );
    }
}

fn telegram(s: &mut Source, plan: &mut Plan, home: &Path, everyone: &[String]) {
    if s.env("TELEGRAM_BOT_TOKEN").is_none() || !enabled(s, "telegram") {
        return;
    }
    let table = "channels.telegram.main";
    let token = s.secret(
        plan,
        "TELEGRAM_BOT_TOKEN",
        &Value::String("${TELEGRAM_BOT_TOKEN}".into()),
        "TELEGRAM_BOT_TOKEN",
    );
    plan.set(table, "bot_token", token.unwrap_or_default());
    let ids = allowed(s, home, "telegram", everyone);
    let policy = policy(s, "telegram", &ids);
    let users = common::allowed_users(
        plan,
        "TELEGRAM_ALLOWED_USERS + telegram.dm_policy",
        &policy,
        &common::ids(&ids, "tg", &["telegram"]),
    );
    plan.set(table, "allowed_users", list(&users));
    mention(s, plan, "telegram", table);
    common::answer_on(plan, "telegram.main");
}

fn discord(s: &mut Source, plan: &mut Plan, everyone: &[String]) {
    if s.env("DISCORD_BOT_TOKEN").is_none() || !enabled(s, "discord") {
        return;
    }
    let table = "channels.discord.main";
    let token = s.secret(
        plan,
        "DISCORD_BOT_TOKEN",
        &Value::String("${DISCORD_BOT_TOKEN}".into()),
        "DISCORD_BOT_TOKEN",
    );
    plan.set(table, "bot_token", token.unwrap_or_default());
    let ids = allowed(s, Path::new("/nonexistent"), "discord", everyone);
    let policy = policy(s, "discord", &ids);
    let users = common::allowed_users(
        plan,
        "DISCORD_ALLOWED_USERS + discord.dm_policy",
        &policy,
        &common::ids(&ids, "discord", &[]),
    );
    plan.set(table, "allowed_users", list(&users));
    plan.left(
        "DISCORD_BOT_TOKEN",
        "Hermes names no server: add guilds = [\"<server id>\"] to [channels.discord.main]",
    );
    mention(s, plan, "discord", table);
    common::answer_on(plan, "discord.main");
}

fn matrix(s: &mut Source, plan: &mut Plan, everyone: &[String]) {
    let (Some(hs), true) = (s.env("MATRIX_HOMESERVER"), enabled(s, "matrix")) else {
        return;
    };
    let table = "channels.matrix.main";
    plan.set(table, "homeserver", q(&hs));
    let user = s.env("MATRIX_USER_ID").unwrap_or_default();
    plan.set(table, "user_id", q(&user));
    plan.mapped("MATRIX_HOMESERVER + MATRIX_USER_ID", format!("[{table}]"));
    let (key, var) = match s.env("MATRIX_ACCESS_TOKEN") {
        Some(_) => ("access_token", "MATRIX_ACCESS_TOKEN"),
        None => ("password", "MATRIX_PASSWORD"),
    };
    if let Some(t) = s.secret(plan, var, &Value::String(format!("${{{var}}}")), var) {
        plan.set(table, key, t);
    }
    let ids = allowed(s, Path::new("/nonexistent"), "matrix", everyone);
    let policy = policy(s, "matrix", &ids);
    let users = common::allowed_users(plan, "MATRIX_ALLOWED_USERS + matrix.dm_policy", &policy, &ids);
    plan.set(table, "allowed_users", list(&users));
    common::answer_on(plan, "matrix.main");
}

/// `approvals.mode` (or the older `approval_mode`) and `command_allowlist`.
fn approvals(s: &mut Source, plan: &mut Plan) {
    let mode = s.str(&["approvals", "mode"]).or_else(|| s.str(&["approval_mode"]));
    if let Some(mode) = mode {
        let level = if mode == "off" { "full" } else { "supervised" };
        plan.set(PROFILE, "level", q(level));
        plan.mapped(format!("approvals.mode ({mode})"), format!("[{PROFILE}] level {level}"));
    }
    let allowed = common::strings(s.get(&["command_allowlist"]));
    if !allowed.is_empty() {
        plan.left(
            "command_allowlist",
            format!("Hermes's always-approved dangerous patterns ({}) have no equivalent: a command is allowed by name in allowed_commands, and asked for under supervised", allowed.join(", ")),
        );
    }
}
