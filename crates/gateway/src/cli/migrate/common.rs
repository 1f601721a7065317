//! The Switchboard side of a migration, the same from either source: a
//! provider, the agent `main`, its risk profile, a channel and its allow
//! list, persona files, skills and memory copied into its workspace.

use super::plan::{Plan, list, q};
use std::path::Path;

/// The agent every migration writes.
pub(super) const AGENT: &str = "agents.main";
/// Its risk profile.
pub(super) const PROFILE: &str = "risk_profiles.migrated";

/// A provider table: `kind` openai or anthropic.
pub(super) fn provider(
    plan: &mut Plan,
    name: &str,
    kind: &str,
    base_url: Option<&str>,
    model: &str,
    key: Option<String>,
) {
    let header = format!("providers.{}", super::plan::key(name));
    plan.set(&header, "kind", q(kind));
    if let Some(url) = base_url {
        plan.set(&header, "base_url", q(url));
    }
    plan.set(&header, "model", q(model));
    if let Some(key) = key {
        plan.set(&header, "api_key", key);
    }
}

/// `id`, or `id-2`, `id-3`…: a provider name no table of `plan` has yet
/// (a fallback may be another model of the same provider).
pub(super) fn free_provider_name(plan: &Plan, id: &str) -> String {
    let taken = |n: &str| {
        plan.tables
            .iter()
            .any(|t| t.header == format!("providers.{}", super::plan::key(n)))
    };
    std::iter::once(id.to_string())
        .chain((2..).map(|n| format!("{id}-{n}")))
        .find(|n| !taken(n))
        .unwrap_or_default()
}

/// `fallbacks` tried in order after `primary` fails.
pub(super) fn fallbacks(plan: &mut Plan, primary: &str, fallbacks: &[String]) {
    if fallbacks.is_empty() {
        return;
    }
    plan.set(
        &format!("providers.{}", super::plan::key(primary)),
        "fallbacks",
        list(fallbacks),
    );
    plan.mapped(
        "fallback models",
        format!("[providers.{primary}].fallbacks = {}", list(fallbacks)),
    );
}

/// `env:VAR` for a provider's key kept in `VAR`, recorded as a secret
/// once however many providers read it.
pub(super) fn key_in_env(plan: &mut Plan, s: &super::source::Source, var: &str) -> String {
    if !plan.secrets.iter().any(|(n, _)| n == var) {
        plan.secret(format!("${var}"), var, s.env(var));
    }
    q(&format!("env:{var}"))
}

/// What a provider id names when its own table does not say: (kind,
/// address, the variable its key is usually in).
pub(super) fn known_provider(id: &str) -> Option<(&'static str, Option<&'static str>, Option<&'static str>)> {
    Some(match id {
        "anthropic" => ("anthropic", None, Some("ANTHROPIC_API_KEY")),
        "openai" | "openai-api" => ("openai", None, Some("OPENAI_API_KEY")),
        "openrouter" => (
            "openai",
            Some("https://openrouter.ai/api/v1"),
            Some("OPENROUTER_API_KEY"),
        ),
        "ollama" => ("openai", Some("http://127.0.0.1:11434/v1"), None),
        "lmstudio" => ("openai", Some("http://127.0.0.1:1234/v1"), None),
        "deepseek" => ("openai", Some("https://api.deepseek.com/v1"), Some("DEEPSEEK_API_KEY")),
        _ => return None,
    })
}

/// The agent's table: its provider, channels, and the risk profile
/// (supervised unless the source said otherwise).
pub(super) fn agent(plan: &mut Plan, provider: &str, system_prompt: &str) {
    plan.set(AGENT, "model_provider", q(provider));
    plan.set(AGENT, "risk_profile", q("migrated"));
    if !system_prompt.is_empty() {
        plan.set(AGENT, "system_prompt", toml_multiline(system_prompt));
    }
    if !plan.tables.iter().any(|t| t.header == PROFILE) {
        plan.set(PROFILE, "level", q("supervised"));
    }
}

/// Add `channel` to the agent's channels.
pub(super) fn answer_on(plan: &mut Plan, channel: &str) {
    let mut channels = current_list(plan, "channels");
    channels.push(channel.to_string());
    plan.set(AGENT, "channels", list(&channels));
}

/// The list `key` of the agent's table so far.
pub(super) fn current_list(plan: &Plan, key: &str) -> Vec<String> {
    plan.tables
        .iter()
        .find(|t| t.header == AGENT)
        .and_then(|t| t.keys.iter().find(|(k, _)| k == key))
        .and_then(|(_, v)| toml::from_str::<toml::Table>(&format!("v = {v}")).ok())
        .and_then(|t| t.get("v").and_then(|v| v.as_array().cloned()))
        .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

/// A DM policy (`pairing`, `allowlist`, `open`, `disabled`) and allowed
/// ids as Switchboard's `allowed_users`.
pub(super) fn allowed_users(plan: &mut Plan, from: &str, policy: &str, ids: &[String]) -> Vec<String> {
    let mut users: Vec<String> = Vec::new();
    match policy {
        "pairing" => {
            users.push("paired".into());
            users.extend(ids.iter().cloned());
            plan.mapped(
                from,
                "allowed_users with \"paired\": strangers get a code an approver accepts",
            );
        }
        "allowlist" => {
            users.extend(ids.iter().cloned());
            plan.mapped(from, "allowed_users: only the listed people");
        }
        "open" => {
            users.push("*".into());
            plan.mapped(from, "allowed_users = [\"*\"]: anyone");
        }
        other => {
            plan.left(from, format!("'{other}': nobody is allowed (allowed_users = [])"));
        }
    }
    users
}

/// A multi-line TOML string.
pub(super) fn toml_multiline(text: &str) -> String {
    if text.contains("'''") || !text.contains('\n') {
        return q(text);
    }
    format!(
        "'''\n{}'''",
        if text.ends_with('\n') {
            text.to_string()
        } else {
            format!("{text}\n")
        }
    )
}

/// The persona files that exist in `dir`, joined as a system prompt, each
/// recorded in `plan`.
pub(super) fn persona(plan: &mut Plan, dir: &Path, files: &[&str]) -> String {
    let mut parts = Vec::new();
    for name in files {
        let path = dir.join(name);
        if let Some(text) = read_plain(&path)
            && !text.trim().is_empty()
        {
            plan.mapped(path.display().to_string(), "agents.main.system_prompt");
            parts.push(text.trim().to_string());
        }
    }
    parts.join("\n\n")
}

/// Copy the skill folders of `dir` (each with a SKILL.md) into the
/// agent's skills folder.
pub(super) fn skills(plan: &mut Plan, dir: &Path) {
    if !std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut found: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    found.sort();
    for path in found {
        let Some(name) = path.file_name().map(|n| n.to_string_lossy().into_owned()) else {
            continue;
        };
        // A link is not followed: it could lead anywhere on this machine,
        // and the agent would read what it copied.
        let is_dir = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir());
        if name.starts_with('.') || !is_dir {
            continue;
        }
        if path.join("SKILL.md").is_file() {
            plan.copies
                .push((path.clone(), Path::new("workspace/main/skills").join(&name)));
        } else {
            // A category folder (Hermes): its skills one level down.
            skills(plan, &path);
        }
    }
}

/// Copy memory files into the agent's workspace (`memory/`), where its
/// file tools read them; `prompt` with a line telling the agent so.
pub(super) fn memory(plan: &mut Plan, files: &[std::path::PathBuf], prompt: String) -> String {
    let mut names = Vec::new();
    for file in files
        .iter()
        .filter(|f| std::fs::symlink_metadata(f).is_ok_and(|m| m.is_file()))
    {
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        plan.copies
            .push((file.clone(), Path::new("workspace/main/memory").join(&name)));
        names.push(format!("memory/{name}"));
    }
    if names.is_empty() {
        return prompt;
    }
    let note = format!(
        "Your notes from before are in {} (read them with file_read).",
        names.join(" and ")
    );
    if prompt.is_empty() {
        note
    } else {
        format!("{prompt}\n\n{note}")
    }
}

/// Ids written as `prefix:123`, `123` or `platform:123`, as `prefix:123`.
pub(super) fn ids(raw: &[String], prefix: &str, aliases: &[&str]) -> Vec<String> {
    raw.iter()
        .map(|id| {
            let bare = aliases
                .iter()
                .chain(std::iter::once(&prefix))
                .find_map(|a| id.strip_prefix(&format!("{a}:")))
                .unwrap_or(id);
            if prefix.is_empty() {
                bare.to_string()
            } else {
                format!("{prefix}:{bare}")
            }
        })
        .collect()
}

/// A JSON list of strings or numbers, as strings.
pub(super) fn strings(v: Option<serde_json::Value>) -> Vec<String> {
    match v {
        Some(serde_json::Value::Array(items)) => items
            .iter()
            .filter_map(|i| match i {
                serde_json::Value::String(s) => Some(s.clone()),
                serde_json::Value::Number(n) => Some(n.to_string()),
                _ => None,
            })
            .collect(),
        Some(serde_json::Value::String(s)) => s
            .split(',')
            .map(|x| x.trim().to_string())
            .filter(|x| !x.is_empty())
            .collect(),
        _ => Vec::new(),
    }
}

/// A pairing allow list with nobody to let people in: said in the plan.
pub(super) fn check_pairing(plan: &mut Plan) {
    let pairs = plan.tables.iter().any(|t| {
        t.header.starts_with("channels.")
            && t.keys
                .iter()
                .any(|(k, v)| k == "allowed_users" && v.contains("\"paired\""))
    });
    let routed = plan
        .tables
        .iter()
        .any(|t| t.header == format!("{PROFILE}.approval_route"));
    if pairs && !routed {
        plan.left(
            "pairing",
            format!("no approver was found: add [{PROFILE}.approval_route] with approvers and an ops room, or strangers' codes wait for nobody"),
        );
    }
}

/// A regular file's text (at most 64 KB), opened without following a
/// link: a persona file that is a link to a key is not put in a prompt.
fn read_plain(path: &Path) -> Option<String> {
    use std::io::Read;
    let file = switchboard_sandbox::fs::open_regular(path, std::fs::OpenOptions::new().read(true)).ok()?;
    let mut text = String::new();
    file.take(64 * 1024).read_to_string(&mut text).ok()?;
    Some(text)
}
