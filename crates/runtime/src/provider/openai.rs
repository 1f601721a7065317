//! OpenAI-compatible chat completions with native tool calls (OpenAI,
//! OpenRouter, Ollama, vLLM, llama.cpp, LM Studio).

use super::http::HttpSettings;
use super::{ChatRequest, ChatResponse, Provider, ProviderError};
use crate::message::{ChatMessage, Role, ToolCall, Usage};
use async_trait::async_trait;
use serde_json::{Value, json};
use switchboard_config::ProviderKind;

pub(crate) struct OpenAiProvider {
    http: HttpSettings,
}

impl OpenAiProvider {
    pub fn new(http: HttpSettings) -> Self {
        Self { http }
    }
}

fn message_json(m: &ChatMessage) -> Value {
    let mut v = json!({ "role": m.role.as_str(), "content": m.content });
    if m.role == Role::Assistant && !m.tool_calls.is_empty() {
        v["tool_calls"] = m
            .tool_calls
            .iter()
            .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
            .collect();
    }
    if let Some(id) = &m.tool_call_id {
        v["tool_call_id"] = json!(id);
    }
    v
}

pub(crate) fn request_body(model: &str, temperature: Option<f64>, req: &ChatRequest) -> Value {
    let mut body = json!({
        "model": model,
        "messages": req.messages.iter().map(message_json).collect::<Vec<_>>(),
        "stream": false,
    });
    if let Some(t) = req.temperature.or(temperature) {
        body["temperature"] = json!(t);
    }
    if !req.tools.is_empty() {
        body["tools"] = req
            .tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}))
            .collect();
    }
    body
}

pub(crate) fn parse_response(v: &Value) -> Option<ChatResponse> {
    let message = v.get("choices")?.get(0)?.get("message")?;
    let text = message.get("content").and_then(Value::as_str).unwrap_or("").to_string();
    let mut tool_calls = Vec::new();
    if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
        for (i, c) in calls.iter().enumerate() {
            let f = c.get("function")?;
            let arguments = match f.get("arguments") {
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
                None => "{}".into(),
            };
            tool_calls.push(ToolCall {
                id: c
                    .get("id")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("call_{i}")),
                name: f.get("name")?.as_str()?.to_string(),
                arguments,
            });
        }
    }
    let usage = v.get("usage").map(|u| Usage {
        input_tokens: u.get("prompt_tokens").and_then(Value::as_u64).unwrap_or(0),
        output_tokens: u.get("completion_tokens").and_then(Value::as_u64).unwrap_or(0),
    });
    Some(ChatResponse {
        text,
        tool_calls,
        usage: usage.unwrap_or_default(),
    })
}

#[async_trait]
impl Provider for OpenAiProvider {
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
        let url = format!("{}/chat/completions", self.http.base_url);
        let mut headers = Vec::new();
        if let Some(key) = &self.http.api_key {
            headers.push(("authorization", format!("Bearer {key}")));
        }
        let body = request_body(&self.http.model, self.http.temperature, req);
        let v = self.http.post_json(&url, &headers, &body).await?;
        parse_response(&v).ok_or_else(|| {
            tracing::warn!(provider = %self.http.name, "chat completion without choices[0].message");
            ProviderError::InvalidResponse(self.http.name.clone())
        })
    }
}
