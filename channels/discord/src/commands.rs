//! The chat commands as Discord application commands: their registration
//! payload, a fingerprint of it (registration is skipped when unchanged, so
//! restarts do not spend the global command rate limit), and the text
//! command an invocation stands for.

use serde_json::{Value, json};
use serenity::model::application::{CommandData, CommandDataOption, CommandDataOptionValue};

/// Option types of Discord's API.
const SUB_COMMAND: u8 = 1;
const STRING: u8 = 3;
const INTEGER: u8 = 4;
const BOOLEAN: u8 = 5;

/// One option: name, type, required, description.
type Opt = (&'static str, u8, bool, &'static str);

/// Top-level commands without sub-commands: name, description, options.
const COMMANDS: &[(&str, &str, &[Opt])] = &[
    ("help", "What can be typed here", &[]),
    ("new", "Start a fresh conversation", &[]),
    ("status", "Agent, model and today's costs", &[]),
    ("agents", "The agents of this chat", &[]),
    ("stop", "Abort the current turn and its children", &[]),
    (
        "approve",
        "Approve a pending request",
        &[
            ("id", STRING, true, "The request id"),
            ("always", BOOLEAN, false, "For the rest of this run"),
        ],
    ),
    (
        "deny",
        "Deny a pending request",
        &[("id", STRING, true, "The request id"), ("reason", STRING, false, "Why")],
    ),
];

const RUN: Opt = ("id", STRING, true, "Run id, #n from list, or all (kill)");

/// `/subagents` sub-commands: name, description, options.
const SUBAGENTS: &[(&str, &str, &[Opt])] = &[
    ("list", "Child runs of this chat", &[]),
    ("info", "One child run in detail", &[RUN]),
    (
        "log",
        "A child run's transcript",
        &[
            RUN,
            ("limit", INTEGER, false, "How many messages"),
            ("tools", BOOLEAN, false, "Include tool calls"),
        ],
    ),
    ("kill", "Stop a child run and its children", &[RUN]),
    (
        "send",
        "Send a message to a child run",
        &[RUN, ("message", STRING, true, "The message")],
    ),
    ("pause", "Refuse new delegations", &[]),
    ("resume", "Allow delegations again", &[]),
];

fn options(opts: &[Opt]) -> Value {
    Value::Array(
        opts.iter()
            .map(|(name, kind, required, description)| {
                json!({"type": kind, "name": name, "description": description, "required": required})
            })
            .collect(),
    )
}

/// The global command set, as `PUT /applications/{id}/commands` takes it.
pub(crate) fn registration() -> Value {
    let mut list: Vec<Value> = COMMANDS
        .iter()
        .map(|(name, description, opts)| json!({"type": 1, "name": name, "description": description, "options": options(opts)}))
        .collect();
    let subs: Vec<Value> = SUBAGENTS
        .iter()
        .map(|(name, description, opts)| {
            json!({"type": SUB_COMMAND, "name": name, "description": description, "options": options(opts)})
        })
        .collect();
    list.push(json!({"type": 1, "name": "subagents", "description": "List, inspect, steer or stop child runs", "options": subs}));
    Value::Array(list)
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

/// Approval commands are answered to the person alone.
pub(crate) fn is_ephemeral(name: &str) -> bool {
    matches!(name, "approve" | "deny")
}

/// The text command an invocation stands for, with its option values in
/// the order the command defines them; `None` for unknown commands.
pub(crate) fn text_of(data: &CommandData) -> Option<String> {
    if data.name == "subagents" {
        let sub = data.options.first()?;
        let CommandDataOptionValue::SubCommand(given) = &sub.value else {
            return None;
        };
        let (_, _, opts) = SUBAGENTS.iter().find(|(n, _, _)| *n == sub.name)?;
        return Some(format!("/subagents {}{}", sub.name, values(opts, given)));
    }
    let (name, _, opts) = COMMANDS.iter().find(|(n, _, _)| *n == data.name)?;
    Some(format!("/{name}{}", values(opts, &data.options)))
}

/// ` v1 v2 ...`: strings and numbers as given; a true boolean as its name
/// (`always`, `tools`), a false one left out.
fn values(defined: &[Opt], given: &[CommandDataOption]) -> String {
    let mut out = String::new();
    for (name, ..) in defined {
        let Some(o) = given.iter().find(|o| o.name == *name) else {
            continue;
        };
        let word = match &o.value {
            CommandDataOptionValue::String(s) => s.split_whitespace().collect::<Vec<_>>().join(" "),
            CommandDataOptionValue::Integer(n) => n.to_string(),
            CommandDataOptionValue::Boolean(true) => (*name).to_string(),
            _ => continue,
        };
        if !word.is_empty() {
            out.push(' ');
            out.push_str(&word);
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

    #[test]
    fn invocations_become_text_commands() {
        let list = data(
            json!({"id": "1", "name": "subagents", "type": 1, "options": [{"name": "list", "type": 1, "options": []}]}),
        );
        assert_eq!(text_of(&list).as_deref(), Some("/subagents list"));
        let send = data(
            json!({"id": "1", "name": "subagents", "type": 1, "options": [{"name": "send", "type": 1, "options": [
            {"name": "message", "type": 3, "value": "look at   the tests"}, {"name": "id", "type": 3, "value": "#2"}]}]}),
        );
        assert_eq!(text_of(&send).as_deref(), Some("/subagents send #2 look at the tests"));
        let approve = data(json!({"id": "1", "name": "approve", "type": 1, "options": [
            {"name": "always", "type": 5, "value": true}, {"name": "id", "type": 3, "value": "ab12"}]}));
        assert_eq!(text_of(&approve).as_deref(), Some("/approve ab12 always"));
        let stop = data(json!({"id": "1", "name": "stop", "type": 1}));
        assert_eq!(text_of(&stop).as_deref(), Some("/stop"));
        assert_eq!(text_of(&data(json!({"id": "1", "name": "other", "type": 1}))), None);
    }

    #[test]
    fn the_registration_is_valid_and_its_fingerprint_stable() {
        let reg = registration();
        let names: Vec<&str> = reg
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "help",
                "new",
                "status",
                "agents",
                "stop",
                "approve",
                "deny",
                "subagents"
            ]
        );
        for c in reg.as_array().unwrap() {
            assert!(c["description"].as_str().unwrap().len() <= 100);
        }
        assert_eq!(fingerprint(), fingerprint());
        assert_eq!(fingerprint().len(), 16);
    }
}
