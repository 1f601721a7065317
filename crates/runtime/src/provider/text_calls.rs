//! Tool calls a model wrote as text (`[providers.<p>] text_tool_calls`,
//! docs/models.md): small local models often write their call into the
//! answer instead of the API's `tool_calls`, in one of a few shapes. When an
//! answer is, or ends with, such a call (see `lift` for which are taken),
//! the call is lifted out of the text; anything else stays text.
//!
//! Shapes read: `<tool_call>{…}</tool_call>` (Hermes, Qwen), `[TOOL_CALLS]`
//! followed by a JSON list or `name[ARGS]{…}` (Mistral), `<|python_tag|>`
//! followed by JSON (Llama 3.1), a fenced block (```` ```json ````, plain
//! ```` ``` ```` or ```` ```tool_call ````) and bare JSON at the end of the
//! answer. A call object is `{"name", "arguments"}` (or `"parameters"`, or
//! OpenAI's `{"function": {…}}`); arguments may be an object or a string
//! holding one.

use super::schema_fit::fits;
use crate::message::{ToolCall, ToolSpec};
use serde_json::Value;
use std::sync::Arc;

/// The tags that open a tagged call.
pub(super) const TAGS: [&str; 3] = ["<tool_call>", "[TOOL_CALLS]", "<|python_tag|>"];

/// The tag a Qwen/Hermes template puts around a tool's result; a small
/// model sometimes writes one as its answer, imitating the template.
pub(super) const RESULT_TAG: &str = "<tool_response>";

/// Fence info strings a call may be written under.
pub(super) const CALL_FENCES: [&str; 4] = ["", "json", "tool_call", "tool_code"];

/// Calls lifted from an answer, and the text around them.
#[derive(Debug, PartialEq)]
pub(crate) struct Lifted {
    /// The calls, in the order written, with generated ids.
    pub calls: Vec<ToolCall>,
    /// The answer's text without them.
    pub text: String,
}

/// The calls `text` ends with. A call written with its arguments
/// (`"arguments"` or `"parameters"`) is taken whatever it names: a tool that
/// is not offered or arguments that do not fit are answered by the tool loop
/// with the usual error, so the model can correct itself instead of the
/// person receiving its JSON. One written as a bare `{"name": …}` is taken
/// only when it names an offered tool whose schema it fits.
pub(crate) fn lift(text: &str, tools: &[Arc<ToolSpec>]) -> Option<Lifted> {
    let (before, raw) = written_calls(text)?;
    let calls = raw
        .into_iter()
        .map(|w| (!w.extra).then(|| checked(w.name, w.args, w.explicit, tools))?)
        .collect::<Option<Vec<_>>>()?;
    (!calls.is_empty()).then(|| Lifted {
        calls,
        text: before.trim_end().to_string(),
    })
}

/// Lift the calls `response`'s text ends with into its `tool_calls`;
/// whether there were any.
pub(crate) fn lift_into(response: &mut super::ChatResponse, tools: &[Arc<ToolSpec>]) -> bool {
    match lift(&response.text, tools) {
        Some(l) => {
            response.tool_calls = l.calls;
            response.text = l.text;
            true
        }
        None => false,
    }
}

/// Whether `text` ends with something written as a call to one of `names`,
/// whatever its arguments (to keep a call out of an answer that must be
/// words).
pub(crate) fn names_a_call(text: &str, names: &[&str]) -> bool {
    before_a_call(text, names).is_some()
}

/// The text before the call `text` ends with, when it ends with one that
/// names one of `names` or writes out its arguments, whatever else the
/// object holds: a call not taken (one echoed with its `"output"`, say) is
/// still JSON the person must not receive.
/// A call inside a tag the model made up (`<tools>…</tools>`) counts too,
/// and so does a `<tool_response>` block, whatever it holds: that is the
/// template's markup, never words.
pub(crate) fn before_a_call<'t>(text: &'t str, names: &[&str]) -> Option<&'t str> {
    let a_call = |w: &Written| w.explicit || names.contains(&w.name.as_str());
    if let Some((before, tag, body)) = last_tagged_block(text) {
        let only_a_call = written_calls(body).is_some_and(|(b, calls)| b.trim().is_empty() && calls.iter().any(a_call));
        if only_a_call || format!("<{tag}>") == RESULT_TAG {
            return Some(before);
        }
    }
    written_calls(text)
        .filter(|(_, calls)| calls.iter().any(a_call))
        .map(|(before, _)| before)
        .or_else(|| loose_call_tail(text))
}

/// The text before a call the model wrote at the end of its answer but not
/// as JSON that reads (unbalanced braces, a stray comma): a fenced block, or
/// the lines from one that opens with `{` or `[`, holding a `"name"` key and
/// an `"arguments"` or `"parameters"` key. Never taken as a call; never
/// sent either.
fn loose_call_tail(text: &str) -> Option<&str> {
    let text = text.trim_end();
    // JSON that reads is the model's answer (a config the person asked
    // for, say), not a broken call; a broken call opens with its name.
    let looks = |s: &str| {
        let s = s.trim();
        let opens_with_name = s
            .strip_prefix('{')
            .or_else(|| {
                s.strip_prefix('[')
                    .map(|r| r.trim_start().strip_prefix('{').unwrap_or(""))
            })
            .is_some_and(|r| r.trim_start().starts_with("\"name\""));
        opens_with_name
            && (s.contains("\"arguments\"") || s.contains("\"parameters\""))
            && serde_json::from_str::<Value>(s).is_err()
    };
    if let Some(body) = text.strip_suffix("```") {
        let open = body.rfind("```")?;
        let (info, code) = body[open + 3..].split_once('\n')?;
        let call_fence = CALL_FENCES.contains(&info.trim().to_ascii_lowercase().as_str());
        return (call_fence && looks(code)).then(|| &text[..open]);
    }
    if !(text.ends_with('}') || text.ends_with(']')) {
        return None;
    }
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .find(|&start| looks(&text[start..]))
        .map(|start| without_open_fence(&text[..start]))
}

/// `text` without the chat template's markup a model copied into its
/// words: every closed `<tool_response>…</tool_response>` and
/// `<tool_call>…</tool_call>` block, and a code fence left empty by that;
/// `None` when there was none.
pub(crate) fn without_markup(text: &str) -> Option<String> {
    let mut out = text.to_string();
    for (open, close) in [(RESULT_TAG, "</tool_response>"), ("<tool_call>", "</tool_call>")] {
        while let Some(at) = out.find(open)
            && let Some(len) = out[at..].find(close)
        {
            out.replace_range(at..at + len + close.len(), "");
        }
    }
    if out == text {
        return None;
    }
    let lines: Vec<&str> = out.lines().collect();
    let mut kept: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        // A fence whose body is now blank: drop it whole.
        let opens = lines[i].trim_start().starts_with("```");
        let close = (i + 1..lines.len()).find(|&j| lines[j].trim() == "```");
        if opens && let Some(j) = close.filter(|&j| lines[i + 1..j].iter().all(|l| l.trim().is_empty())) {
            i = j + 1;
            continue;
        }
        kept.push(lines[i]);
        i += 1;
    }
    Some(kept.join("\n").trim().to_string())
}

/// The `<tag>…</tag>` block `text` ends with: the text before it, the tag
/// and what it holds.
fn last_tagged_block(text: &str) -> Option<(&str, &str, &str)> {
    let trimmed = text.trim_end();
    let open_close = trimmed.strip_suffix('>')?.rfind("</")?;
    let tag = &trimmed[open_close + 2..trimmed.len() - 1];
    if tag.is_empty() || !tag.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    let open = trimmed[..open_close].rfind(&format!("<{tag}>"))?;
    Some((&trimmed[..open], tag, &trimmed[open + tag.len() + 2..open_close]))
}

/// A call as written.
#[derive(Clone)]
struct Written {
    name: String,
    args: Value,
    /// Its arguments were written out (an `arguments` or `parameters` key,
    /// `[ARGS]`).
    explicit: bool,
    /// The object holds keys a call does not (`"output"`, `"result"`): a
    /// call reported, not asked for; never taken.
    extra: bool,
}

/// The text before the calls `text` ends with, and the calls.
fn written_calls(text: &str) -> Option<(&str, Vec<Written>)> {
    let text = text.trim_end();
    tagged(text)
        .or_else(|| fenced(text))
        .or_else(|| bare(text))
        // A call followed by a closing fence that was never opened (the
        // real small model wrote that).
        .or_else(|| bare(text.strip_suffix("```")?.trim_end()))
}

/// `<tool_call>…</tool_call>` (repeated), `[TOOL_CALLS]…`, `<|python_tag|>…`.
fn tagged(text: &str) -> Option<(&str, Vec<Written>)> {
    let (at, tag) = TAGS.iter().filter_map(|t| text.find(t).map(|i| (i, *t))).min()?;
    let rest = &text[at + tag.len()..];
    let calls = match tag {
        "<tool_call>" => rest
            .split("<tool_call>")
            .map(|part| {
                let part = part.trim();
                let part = part.strip_suffix("</tool_call>").unwrap_or(part);
                json_calls(part.trim())
            })
            .collect::<Option<Vec<_>>>()?
            .concat(),
        "[TOOL_CALLS]" => json_calls(rest.trim()).or_else(|| args_tagged(rest))?,
        _ => semicolon_separated(rest)?,
    };
    Some((&text[..at], calls))
}

/// Mistral's newer `name[ARGS]{…}` form, repeated.
fn args_tagged(rest: &str) -> Option<Vec<Written>> {
    rest.split("[TOOL_CALLS]")
        .map(|part| {
            let (name, args) = part.split_once("[ARGS]")?;
            let args: Value = serde_json::from_str(args.trim()).ok()?;
            Some(Written {
                name: name.trim().to_string(),
                args,
                explicit: true,
                extra: false,
            })
        })
        .collect()
}

/// Llama's `<|python_tag|>` calls, one JSON object each, `;` between them.
fn semicolon_separated(rest: &str) -> Option<Vec<Written>> {
    let rest = rest
        .trim()
        .trim_end_matches("<|eom_id|>")
        .trim_end_matches("<|eot_id|>");
    if let Some(calls) = json_calls(rest.trim()) {
        return Some(calls);
    }
    rest.split(';')
        .map(|p| json_calls(p.trim()))
        .collect::<Option<Vec<_>>>()
        .map(|v| v.concat())
}

/// One or more fenced blocks at the end of `text`, each holding calls.
fn fenced(text: &str) -> Option<(&str, Vec<Written>)> {
    let mut end = text.len();
    let mut blocks = Vec::new();
    while let Some(body) = text[..end].trim_end().strip_suffix("```") {
        let open = body.rfind("```")?;
        let inside = &body[open + 3..];
        let (info, code) = inside.split_once('\n')?;
        if !CALL_FENCES.contains(&info.trim().to_ascii_lowercase().as_str()) {
            break;
        }
        blocks.push(json_calls(code.trim())?);
        end = open;
    }
    if blocks.is_empty() {
        return None;
    }
    blocks.reverse();
    Some((&text[..end], blocks.concat()))
}

/// JSON at the end of `text` that starts a line: one value, or several one
/// after another (one per line).
fn bare(text: &str) -> Option<(&str, Vec<Written>)> {
    if !(text.ends_with('}') || text.ends_with(']')) {
        return None;
    }
    let starts = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1));
    for start in starts {
        let line = text[start..].trim_start();
        if line.starts_with('{') || line.starts_with('[') {
            if let Some(calls) = bare_calls(line) {
                return Some((without_open_fence(&text[..start]), calls));
            }
            continue;
        }
        // A call written after a few words on its line (`Error: {…}`, seen
        // from the real small model): taken only with its arguments
        // written out, so a sentence that merely quotes an object stays.
        let Some(brace) = line.split('\n').next().and_then(|l| l.find('{')) else {
            continue;
        };
        let at = text.len() - line.len() + brace;
        if let Some(calls) = bare_calls(&text[at..]).filter(|calls| calls.iter().all(|w| w.explicit)) {
            return Some((&text[..at], calls));
        }
    }
    None
}

/// The calls `json` (the rest of the answer, from a `{` or `[`) holds: one
/// JSON value, several in a row, or one per line.
fn bare_calls(json: &str) -> Option<Vec<Written>> {
    if let Some(calls) = json_calls(json) {
        return Some(calls);
    }
    let values: Option<Vec<Value>> = serde_json::Deserializer::from_str(json)
        .into_iter::<Value>()
        .map(Result::ok)
        .collect();
    if let Some(values) = values
        && let Some(calls) = values.iter().map(calls_in).collect::<Option<Vec<_>>>()
    {
        return Some(calls.concat());
    }
    let per_line: Option<Vec<_>> = json.lines().filter(|l| !l.trim().is_empty()).map(json_calls).collect();
    per_line.map(|calls| calls.concat())
}

/// `before` without a fence opened for the call that follows it and never
/// closed (a model that stopped before writing the closing fence).
fn without_open_fence(before: &str) -> &str {
    let trimmed = before.trim_end();
    let line_start = trimmed.rfind('\n').map_or(0, |i| i + 1);
    match trimmed[line_start..].strip_prefix("```") {
        Some(info) if CALL_FENCES.contains(&info.trim().to_ascii_lowercase().as_str()) => &trimmed[..line_start],
        _ => before,
    }
}

/// Calls in `json`: an object or a list of objects. A call wrapped in a
/// second pair of braces (`{{"name": …}}`, copied from a template that
/// escapes its braces) is read too, and so are closing braces left over
/// after it (the real small model wrote `{{…}}}}`).
fn json_calls(json: &str) -> Option<Vec<Written>> {
    let parsed = serde_json::from_str::<Value>(json).ok().or_else(|| {
        let inner = json.strip_prefix('{')?;
        let inner = if inner.trim_start().starts_with('{') {
            inner.trim_start()
        } else {
            json
        };
        let mut values = serde_json::Deserializer::from_str(inner).into_iter::<Value>();
        let first = values.next()?.ok()?;
        let rest = &inner[values.byte_offset()..];
        rest.chars().all(|c| c == '}' || c.is_whitespace()).then_some(first)
    })?;
    calls_in(&parsed)
}

fn calls_in(v: &Value) -> Option<Vec<Written>> {
    match v {
        Value::Array(items) if !items.is_empty() => items.iter().map(call_in).collect(),
        Value::Object(_) => Some(vec![call_in(v)?]),
        _ => None,
    }
}

/// One call object, in any of the shapes in the module doc.
fn call_in(v: &Value) -> Option<Written> {
    let o = v.as_object()?;
    if let Some(f) = o.get("function").filter(|f| f.is_object()) {
        return call_in(f);
    }
    let name = o.get("name")?.as_str()?.trim().to_string();
    let allowed = ["name", "arguments", "parameters", "type", "id"];
    let extra = o.keys().any(|k| !allowed.contains(&k.as_str()));
    let written = o.get("arguments").or_else(|| o.get("parameters"));
    // `null` is no arguments; arguments that are not an object are still a
    // call written out, which the tool loop answers with its usual error.
    let args = match written {
        None | Some(Value::Null) => Value::Object(Default::default()),
        Some(Value::String(s)) => serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone())),
        Some(a) => a.clone(),
    };
    (args.is_object() || written.is_some()).then_some(Written {
        name,
        args,
        explicit: written.is_some(),
        extra,
    })
}

/// The call, when it was written out with its arguments, or names an
/// offered tool whose schema its arguments fit.
fn checked(name: String, args: Value, explicit: bool, tools: &[Arc<ToolSpec>]) -> Option<ToolCall> {
    let fitting = tools
        .iter()
        .find(|t| t.name == name)
        .and_then(|spec| serde_json::from_str::<Value>(spec.parameters.get()).ok())
        .is_some_and(|schema| fits(&schema, &args));
    if !fitting && !explicit {
        return None;
    }
    if !fitting {
        tracing::info!(tool = %name, "a call written as text names no offered tool or does not fit it; the tool loop answers it");
    }
    Some(ToolCall {
        id: format!("call_{}", &uuid::Uuid::new_v4().simple().to_string()[..24]),
        name,
        arguments: args.to_string(),
    })
}

#[cfg(test)]
#[path = "text_calls_tests.rs"]
mod tests;
