//! The chat commands (the core's catalog) as Discord application commands:
//! their registration payload, a fingerprint of it (registration is
//! skipped when unchanged, so restarts do not spend the global command
//! rate limit), and what an invocation stands for.

use serde_json::{Value, json};
use serenity::model::application::{CommandData, CommandDataOption, CommandDataOptionValue};
use switchboard_core::catalog::{self, ArgKind, ArgSpec, CommandSpec};

/// Option types of Discord's API.
const SUB_COMMAND: u8 = 1;
const STRING: u8 = 3;
const INTEGER: u8 = 4;
const BOOLEAN: u8 = 5;

fn option_type(kind: ArgKind) -> u8 {
    match kind {
        ArgKind::Text => STRING,
        ArgKind::Number => INTEGER,
        ArgKind::Flag => BOOLEAN,
    }
}

/// A command's options: its sub-commands, or its arguments (Discord wants
/// the required ones first; the catalog's order is kept for the values).
fn options(c: &CommandSpec) -> Value {
    if !c.subcommands.is_empty() {
        return c
            .subcommands
            .iter()
            .map(|s| json!({"type": SUB_COMMAND, "name": s.name, "description": s.about, "options": options(s)}))
            .collect();
    }
    let mut args: Vec<&ArgSpec> = c.args.iter().collect();
    args.sort_by_key(|a| !a.required);
    args.iter()
        .map(|a| json!({"type": option_type(a.kind), "name": a.name, "description": a.about, "required": a.required}))
        .collect()
}

/// The global command set, as `PUT /applications/{id}/commands` takes it.
pub(crate) fn registration() -> Value {
    catalog::menu()
        .map(|c| json!({"type": 1, "name": c.name, "description": c.about, "options": options(c)}))
        .collect()
}

/// A stable fingerprint of the registration (FNV-1a over its JSON).
pub(crate) fn fingerprint() -> String {
    format!("{:016x}", fnv(registration().to_string().as_bytes()))
}

/// FNV-1a, 64 bits: stable across builds, unlike std's hasher.
pub(crate) fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Commands answered to the person alone.
pub(crate) fn is_ephemeral(name: &str) -> bool {
    catalog::command(name).is_some_and(|c| c.private)
}

/// The catalog command an invocation stands for and its values (a
/// sub-command's name first, then values in the order the catalog defines
/// them); `None` for commands the bot did not register.
pub(crate) fn invocation(data: &CommandData) -> Option<(String, Vec<String>)> {
    let spec = catalog::menu().find(|c| c.name == data.name)?;
    if spec.subcommands.is_empty() {
        return Some((spec.name.to_string(), values(spec.args, &data.options)));
    }
    let sub = data.options.first()?;
    let CommandDataOptionValue::SubCommand(given) = &sub.value else {
        return None;
    };
    let sub_spec = spec.subcommands.iter().find(|s| s.name == sub.name)?;
    let mut args = vec![sub_spec.name.to_string()];
    args.extend(values(sub_spec.args, given));
    Some((spec.name.to_string(), args))
}

/// Strings (whitespace runs made one space) and numbers as given; a true
/// flag as its name (`always`, `tools`), a false one left out.
fn values(defined: &[ArgSpec], given: &[CommandDataOption]) -> Vec<String> {
    let mut out = Vec::new();
    for a in defined {
        let Some(o) = given.iter().find(|o| o.name == a.name) else {
            continue;
        };
        let word = match &o.value {
            CommandDataOptionValue::String(s) => s.split_whitespace().collect::<Vec<_>>().join(" "),
            CommandDataOptionValue::Integer(n) => n.to_string(),
            CommandDataOptionValue::Boolean(true) => a.name.to_string(),
            _ => continue,
        };
        if !word.is_empty() {
            out.push(word);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(v: Value) -> CommandData {
        serde_json::from_value(v).unwrap()
    }

    fn of(v: Value) -> Option<(String, Vec<String>)> {
        invocation(&data(v))
    }

    #[test]
    fn invocations_become_catalog_commands_with_their_values() {
        let list = of(
            json!({"id": "1", "name": "subagents", "type": 1, "options": [{"name": "list", "type": 1, "options": []}]}),
        );
        assert_eq!(list, Some(("subagents".into(), vec!["list".into()])));
        let send = of(
            json!({"id": "1", "name": "subagents", "type": 1, "options": [{"name": "send", "type": 1, "options": [
            {"name": "message", "type": 3, "value": "look at   the tests"}, {"name": "id", "type": 3, "value": "#2"}]}]}),
        );
        assert_eq!(
            send,
            Some((
                "subagents".into(),
                vec!["send".into(), "#2".into(), "look at the tests".into()]
            ))
        );
        let approve = of(json!({"id": "1", "name": "approve", "type": 1, "options": [
            {"name": "always", "type": 5, "value": true}, {"name": "id", "type": 3, "value": "ab12"}]}));
        assert_eq!(approve, Some(("approve".into(), vec!["ab12".into(), "always".into()])));
        assert_eq!(
            of(json!({"id": "1", "name": "stop", "type": 1})),
            Some(("stop".into(), vec![]))
        );
        assert_eq!(of(json!({"id": "1", "name": "other", "type": 1})), None);
        assert_eq!(
            of(json!({"id": "1", "name": "attach", "type": 1})),
            None,
            "terminal only"
        );
    }

    #[test]
    fn the_registration_is_the_catalog_and_its_fingerprint_stable() {
        let reg = registration();
        let names: Vec<&str> = reg
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        let menu: Vec<&str> = catalog::menu().map(|c| c.name).collect();
        assert_eq!(names, menu);
        assert!(names.contains(&"console") && names.contains(&"agents"));
        for c in reg.as_array().unwrap() {
            assert!(c["description"].as_str().unwrap().len() <= 100);
            // Required options come before optional ones (Discord refuses
            // the set otherwise).
            let required: Vec<bool> = c["options"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| o["required"].as_bool().unwrap_or(false))
                .collect();
            assert!(required.windows(2).all(|w| w[0] || !w[1]), "{c}");
        }
        assert!(is_ephemeral("approve") && is_ephemeral("console") && !is_ephemeral("status"));
        assert_eq!(fingerprint(), fingerprint());
        assert_eq!(fingerprint().len(), 16);
    }
}
