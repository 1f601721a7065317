//! How the scripted model reads a request body: as much as the script
//! needs of it, and no more.

use super::Shared;
use serde_json::{Value, json};
use std::sync::Mutex;

/// The request as a JSON tree when it is recorded or matched; for the
/// echo alone, a tree of its messages only; otherwise only checked. Also
/// returns the requested model and whether it asked for a stream.
///
/// Benchmarks share the machine's cores with this model: building a tree
/// of every request, with the kilobytes of tool schemas a gateway sends
/// and no echo reads, would charge the model's own work to whatever is
/// measured beside it.
pub(super) fn parse(shared: &Mutex<Shared>, body: &[u8]) -> Result<(Option<Value>, Value, bool), String> {
    #[derive(serde::Deserialize)]
    struct Skimmed {
        model: Option<String>,
        #[serde(default)]
        stream: bool,
        /// Kept as raw text (no tree built); read only for the echo.
        #[serde(default)]
        messages: Option<Box<serde_json::value::RawValue>>,
    }
    let bad = |e: serde_json::Error| format!("the body is not JSON: {e}");
    let (needs_tree, echo) = {
        let s = shared.lock().unwrap();
        (!s.skip_recording || s.any_matcher, s.echo.is_some())
    };
    if needs_tree {
        let v: Value = serde_json::from_slice(body).map_err(bad)?;
        let model = v.get("model").cloned().unwrap_or(Value::Null);
        let stream = v.get("stream").and_then(Value::as_bool).unwrap_or(false);
        return Ok((Some(v), model, stream));
    }
    let m: Skimmed = serde_json::from_slice(body).map_err(bad)?;
    let messages = match (echo, m.messages) {
        (true, Some(raw)) => Some(json!({"messages": serde_json::from_str::<Value>(raw.get()).map_err(bad)?})),
        _ => None,
    };
    Ok((messages, m.model.map(Value::String).unwrap_or(Value::Null), m.stream))
}
