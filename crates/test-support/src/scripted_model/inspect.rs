//! Reading recorded requests in assertions: tool results, offered tools,
//! the last message's text, and the tokens a body is charged.

use serde_json::Value;

/// The tool results (role `tool`) of a recorded OpenAI-shaped request.
pub fn tool_results(req: &Value) -> Vec<String> {
    req["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or("").to_string())
        .collect()
}

/// Names of the tools offered in a request (either API shape).
pub fn offered_tools(req: &Value) -> Vec<String> {
    req.get("tools")
        .and_then(Value::as_array)
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| {
                    t.pointer("/function/name")
                        .or_else(|| t.get("name"))
                        .and_then(Value::as_str)
                        .map(str::to_string)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The text of the last message of a request (either API shape).
pub fn last_message_text(req: &Value) -> String {
    let Some(last) = req.get("messages").and_then(Value::as_array).and_then(|m| m.last()) else {
        return String::new();
    };
    match last.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .map(|b| match b.get("text").or_else(|| b.get("content")) {
                Some(Value::String(s)) => s.clone(),
                _ => String::new(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The texts of the person messages at the end of a request (after the
/// last message of any other role), oldest first (OpenAI shape).
pub(crate) fn trailing_person_texts(req: &Value) -> Vec<String> {
    let Some(messages) = req.get("messages").and_then(Value::as_array) else {
        return Vec::new();
    };
    let mut out: Vec<String> = messages
        .iter()
        .rev()
        .take_while(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect();
    out.reverse();
    out
}

/// The token count the scripted model charges for a request body.
pub fn tokens_of(body_len: usize) -> u64 {
    body_len as u64 / 4
}
