//! A server's tool list, read as plain JSON so one malformed tool is
//! skipped with a warning instead of losing the whole list, and each tool's
//! risk as the operator configured it.

use crate::names::{display_name, wire_name};
use serde_json::{Map, Value};
use switchboard_config::{McpServerConfig, Risk};

/// A server with more tools than this offers them by name and one-line
/// description until called (unless `expose` names them).
pub const FULL_SCHEMAS_UP_TO: usize = 8;

/// Tools taken from one server; the rest are skipped with a warning.
const MAX_TOOLS: usize = 256;
/// Characters of a description kept (it goes into every model request).
const MAX_DESCRIPTION: usize = 2048;
/// Bytes of an argument schema; a larger one is skipped.
const MAX_SCHEMA: usize = 16 * 1024;

/// One tool of one server, as the runtime offers it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInfo {
    /// The server's name in the configuration.
    pub server: String,
    /// The tool's name on the server.
    pub name: String,
    /// `<server>.<tool>`: the name people and the configuration use.
    pub display: String,
    /// The name the model calls it by (see `names`).
    pub wire: String,
    /// The server's description of it.
    pub description: String,
    /// Its arguments' JSON schema (an object schema).
    pub schema: Value,
    /// How the approval gate rates a call.
    pub risk: Risk,
    /// Offered by name and one-line description until first called.
    pub brief: bool,
}

impl ToolInfo {
    /// The required arguments `args` lacks (to tell a model that called a
    /// briefly offered tool what to send).
    pub fn missing_required(&self, args: &Value) -> Vec<String> {
        let Some(required) = self.schema.get("required").and_then(Value::as_array) else {
            return Vec::new();
        };
        required
            .iter()
            .filter_map(Value::as_str)
            .filter(|k| args.get(*k).is_none())
            .map(str::to_string)
            .collect()
    }

    /// The first line of the description, at most 160 characters.
    pub fn one_line(&self) -> String {
        let line = self.description.lines().next().unwrap_or("").trim();
        match line.char_indices().nth(160) {
            Some((cut, _)) => format!("{}…", &line[..cut]),
            None => line.to_string(),
        }
    }
}

/// The tools of `server` from the `tools` array of `tools/list` answers;
/// malformed entries are logged and skipped.
pub(crate) fn tools_from(server: &str, config: &McpServerConfig, raw: &[Value]) -> Vec<ToolInfo> {
    let mut out: Vec<ToolInfo> = Vec::new();
    if raw.len() > MAX_TOOLS {
        tracing::warn!(
            server,
            listed = raw.len(),
            kept = MAX_TOOLS,
            "an MCP server lists more tools than are taken; the rest are skipped"
        );
    }
    for entry in raw.iter().take(MAX_TOOLS) {
        match one(server, config, entry) {
            Ok(t) if let Some(first) = out.iter().find(|o| o.wire == t.wire) => {
                tracing::error!(server, first = %first.name, second = %t.name, wire = %t.wire, "an MCP tool was skipped: the model would call it by the same name as the first (names made safe for model providers)");
            }
            Ok(t) => out.push(t),
            Err(why) => tracing::warn!(server, %why, "an MCP tool was skipped: its description is malformed"),
        }
    }
    let many = out.len() > FULL_SCHEMAS_UP_TO;
    for t in &mut out {
        t.brief = match &config.expose {
            Some(list) => !list.contains(&t.name),
            None => many,
        };
    }
    out
}

fn one(server: &str, config: &McpServerConfig, entry: &Value) -> Result<ToolInfo, String> {
    let name = entry.get("name").and_then(Value::as_str).ok_or("no name")?;
    // What the MCP specification asks tool names to be; anything else
    // (markup, spaces, control characters) never reaches a chat or the console.
    let name_ok = (1..=128).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if !name_ok {
        return Err(format!(
            "{:?}: a tool name must be 1 to 128 letters, digits, '_', '-' or '.'",
            name.chars().take(40).collect::<String>()
        ));
    }
    let schema = entry
        .get("inputSchema")
        .and_then(Value::as_object)
        .ok_or_else(|| format!("{name}: inputSchema is not a JSON object"))?;
    match schema.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        None => {}
        Some(other) => return Err(format!("{name}: inputSchema has type {other}, not \"object\"")),
    }
    if let Some(p) = schema.get("properties")
        && !p.is_object()
    {
        return Err(format!("{name}: inputSchema.properties is not an object"));
    }
    let size = Value::Object(schema.clone()).to_string().len();
    if size > MAX_SCHEMA {
        return Err(format!(
            "{name}: its inputSchema is {size} bytes, more than {MAX_SCHEMA}"
        ));
    }
    let mut schema: Map<String, Value> = schema.clone();
    schema.insert("type".into(), Value::String("object".into()));
    schema.entry("properties").or_insert_with(|| Value::Object(Map::new()));
    // Shown to the model and, its first line, to people: no control
    // characters (terminal escapes, bidi marks) beyond line breaks.
    let description: String = entry
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .chars()
        .filter(|c| *c == '\n' || !(c.is_control() || is_format(*c)))
        .take(MAX_DESCRIPTION)
        .collect();
    Ok(ToolInfo {
        server: server.to_string(),
        name: name.to_string(),
        display: display_name(server, name),
        wire: wire_name(server, name),
        description,
        schema: Value::Object(schema),
        risk: risk_of(config, name, entry.get("annotations")),
        brief: false,
    })
}

/// Invisible characters that reorder or hide text (bidi controls, zero widths).
fn is_format(c: char) -> bool {
    matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}')
}

/// The tool's own `risk` entry wins. Otherwise the `"*"` entry (or `high`)
/// is the base, and where annotations are trusted a read-only tool is
/// `read`, a destructive one `high` and a non-destructive one at most
/// `medium`.
fn risk_of(config: &McpServerConfig, name: &str, annotations: Option<&Value>) -> Risk {
    if let Some(r) = config.risk.get(name) {
        return *r;
    }
    let base = config.risk.get("*").copied().unwrap_or(Risk::High);
    let Some(a) = annotations.filter(|_| config.trust_annotations) else {
        return base;
    };
    let hint = |k: &str| a.get(k).and_then(Value::as_bool);
    match (hint("readOnlyHint"), hint("destructiveHint")) {
        (Some(true), _) => Risk::Read,
        (_, Some(true)) => Risk::High,
        (_, Some(false)) => base.min(Risk::Medium),
        _ => base,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config(extra: &str) -> McpServerConfig {
        let text = format!("command = \"x\"\n{extra}");
        toml::from_str(&text).expect("config")
    }

    #[test]
    fn malformed_tools_are_skipped_and_the_others_kept() {
        let raw = vec![
            json!({"name": "ok", "description": "Does it.\nMore.", "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}}),
            json!({"name": "bad", "inputSchema": "nope"}),
            json!({"name": "worse", "inputSchema": {"type": "array"}}),
            json!({"inputSchema": {"type": "object"}}),
            json!({"name": "<b>x</b>", "inputSchema": {"type": "object"}}),
            json!({"name": "", "inputSchema": {"type": "object"}}),
            json!({"name": "huge", "inputSchema": {"type": "object", "description": "x".repeat(MAX_SCHEMA)}}),
        ];
        let tools = tools_from("s", &config(""), &raw);
        assert_eq!(tools.len(), 1);
        assert_eq!(tools[0].display, "s.ok");
        assert_eq!(tools[0].one_line(), "Does it.");
        let odd = json!({"name": "t", "description": "a\u{1b}]52;c;x\u{7}b\u{202E}c", "inputSchema": {}});
        assert_eq!(tools_from("s", &config(""), &[odd])[0].description, "a]52;c;xbc");
        assert_eq!(tools[0].missing_required(&json!({})), vec!["a".to_string()]);
        assert_eq!(tools[0].risk, Risk::High);
    }

    #[test]
    fn risk_comes_from_the_operator_and_annotations_only_when_trusted() {
        let ro = json!({"name": "look", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}});
        let plain = tools_from("s", &config(""), std::slice::from_ref(&ro));
        assert_eq!(plain[0].risk, Risk::High);
        let trusted = tools_from("s", &config("trust_annotations = true"), std::slice::from_ref(&ro));
        assert_eq!(trusted[0].risk, Risk::Read);
        let set = tools_from(
            "s",
            &config("trust_annotations = true\nrisk = { look = \"medium\" }"),
            &[ro],
        );
        assert_eq!(set[0].risk, Risk::Medium);
    }

    #[test]
    fn many_tools_are_offered_briefly_unless_exposed() {
        let raw: Vec<Value> = (0..20)
            .map(|i| json!({"name": format!("t{i}"), "inputSchema": {"type": "object"}}))
            .collect();
        assert!(tools_from("s", &config(""), &raw).iter().all(|t| t.brief));
        let exposed = tools_from("s", &config("expose = [\"t3\"]"), &raw);
        assert_eq!(exposed.iter().filter(|t| !t.brief).count(), 1);
        assert!(tools_from("s", &config(""), &raw[..3]).iter().all(|t| !t.brief));
    }
}
