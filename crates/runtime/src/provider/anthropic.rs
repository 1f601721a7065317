//! Anthropic Messages API.

use super::http::HttpSettings;
use super::{ChatRequest, ChatResponse, Provider, ProviderError};
use crate::message::{ChatMessage, Role, ToolCall, Usage};
use async_trait::async_trait;
use serde_json::{Value, json};
use switchboard_config::ProviderKind;

pub(crate) struct AnthropicProvider {
    http: HttpSettings,
}

impl AnthropicProvider {
    pub fn new(http: HttpSettings) -> Self {
        Self { http }
    }
}

/// Content blocks of one message; tool results become `tool_result` blocks
/// in a user turn, assistant tool calls become `tool_use` blocks.
fn blocks(m: &ChatMessage) -> Vec<Value> {
    match m.role {
        Role::Tool => vec![json!({
            "type": "tool_result",
            "tool_use_id": m.tool_call_id.clone().unwrap_or_default(),
            "content": m.content,
        })],
        _ => {
            let mut out = Vec::new();
            if !m.content.is_empty() {
                out.push(json!({"type": "text", "text": m.content}));
            }
            for c in &m.tool_calls {
                let input: Value = serde_json::from_str(&c.arguments).unwrap_or_else(|_| json!({}));
                out.push(json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input}));
            }
            out
        }
    }
}

pub(crate) fn request_body(model: &str, temperature: Option<f64>, req: &ChatRequest) -> Value {
    let system: Vec<&str> = req
        .messages
        .iter()
        .filter(|m| m.role == Role::System)
        .map(|m| m.content.as_str())
        .collect();
    // Anthropic wants alternating user/assistant turns: merge neighbours.
    let mut messages: Vec<(&str, Vec<Value>)> = Vec::new();
    for m in req.messages.iter().filter(|m| m.role != Role::System) {
        let role = if m.role == Role::Assistant { "assistant" } else { "user" };
        let b = blocks(m);
        if b.is_empty() {
            continue;
        }
        match messages.last_mut() {
            Some((r, existing)) if *r == role => existing.extend(b),
            _ => messages.push((role, b)),
        }
    }
    let mut body = json!({
        "model": model,
        "max_tokens": 4096,
        "messages": messages.into_iter().map(|(r, c)| json!({"role": r, "content": c})).collect::<Vec<_>>(),
    });
    if !system.is_empty() {
        body["system"] = json!(system.join("\n\n"));
    }
    if let Some(t) = req.temperature.or(temperature) {
        body["temperature"] = json!(t.min(1.0));
    }
    if !req.tools.is_empty() {
        body["tools"] = req
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
    }
    body
}

pub(crate) fn parse_response(v: &Value) -> Option<ChatResponse> {
    let content = v.get("content")?.as_array()?;
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for b in content {
        match b.get("type")?.as_str()? {
            "text" => text.push_str(b.get("text")?.as_str()?),
            "tool_use" => tool_calls.push(ToolCall {
                id: b.get("id")?.as_str()?.to_string(),
                name: b.get("name")?.as_str()?.to_string(),
                arguments: b.get("input").cloned().unwrap_or(json!({})).to_string(),
            }),
            _ => {}
        }
    }
    let usage = v.get("usage").map(|u| Usage {
        input_tokens: u.get("input_tokens").and_then(Value::as_u64).unwrap_or(0),
        output_tokens: u.get("output_tokens").and_then(Value::as_u64).unwrap_or(0),
    });
    Some(ChatResponse {
        text,
        tool_calls,
        usage: usage.unwrap_or_default(),
    })
}

#[async_trait]
impl Provider for AnthropicProvider {
    fn name(&self) -> &str {
        &self.http.name
    }
    fn kind(&self) -> ProviderKind {
        self.http.kind
    }
    fn model(&self) -> &str {
        &self.http.model
    }

    async fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, ProviderError> {
        let url = format!("{}/v1/messages", self.http.base_url.trim_end_matches("/v1"));
        let mut headers = vec![("anthropic-version", "2023-06-01".to_string())];
        if let Some(key) = &self.http.api_key {
            headers.push(("x-api-key", key.clone()));
        }
        let body = request_body(&self.http.model, self.http.temperature, req);
        let v = self.http.post_json(&url, &headers, &body).await?;
        parse_response(&v).ok_or_else(|| {
            tracing::warn!(provider = %self.http.name, "messages response without content blocks");
            ProviderError::InvalidResponse(self.http.name.clone())
        })
    }
}
