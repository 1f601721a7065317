//! Anthropic Messages API.

use super::http::HttpSettings;
use super::{ChatRequest, ChatResponse, Provider, ProviderError};
use crate::message::{ChatMessage, Role, ToolCall, Usage};
use async_trait::async_trait;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use switchboard_config::ProviderKind;

const WIRE: super::stream::Wire = super::stream::Wire {
    api: super::stream::Api::Anthropic,
    plain: parse_response,
    missing: "messages response without content blocks",
};

pub(crate) struct AnthropicProvider {
    http: HttpSettings,
    /// Where messages are posted.
    messages_url: reqwest::Url,
}

impl AnthropicProvider {
    pub(super) fn new(http: HttpSettings) -> Result<Self, ProviderError> {
        let root = http.base_url.trim_end_matches("/v1");
        let messages_url = http.endpoint(&format!("{root}/v1/messages"))?;
        Ok(Self { http, messages_url })
    }
}

/// One content block, borrowed from the conversation.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block<'a> {
    Text { text: &'a str },
    Image { source: ImageSource<'a> },
    ToolUse { id: &'a str, name: &'a str, input: Value },
    ToolResult { tool_use_id: &'a str, content: &'a str },
}

/// A picture given inline (`{"type": "base64", "media_type", "data"}`).
#[derive(Serialize)]
struct ImageSource<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    media_type: &'a str,
    data: &'a str,
}

#[derive(Serialize)]
struct WireMessage<'a> {
    role: &'static str,
    content: Vec<Block<'a>>,
}

#[derive(Serialize)]
struct WireTool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a RawValue,
}

#[derive(Serialize)]
struct SystemBlock<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

#[derive(Serialize)]
struct WireBody<'a> {
    model: &'a str,
    max_tokens: u32,
    messages: Vec<WireMessage<'a>>,
    /// One block per system message; the first carries the cache mark.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    system: Vec<SystemBlock<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    /// Server-sent events instead of one body.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
}

/// Content blocks of one message; tool results become `tool_result` blocks
/// in a user turn, assistant tool calls become `tool_use` blocks.
fn blocks(m: &ChatMessage) -> Vec<Block<'_>> {
    match m.role {
        Role::Tool => vec![Block::ToolResult {
            tool_use_id: m.tool_call_id.as_deref().unwrap_or_default(),
            content: &m.content,
        }],
        _ => {
            // Pictures go before the text that asks about them.
            let mut out: Vec<Block<'_>> = m
                .images
                .iter()
                .map(|i| Block::Image {
                    source: ImageSource {
                        kind: "base64",
                        media_type: &i.mime,
                        data: &i.base64,
                    },
                })
                .collect();
            if !m.content.is_empty() {
                out.push(Block::Text { text: &m.content });
            }
            for c in &m.tool_calls {
                let input: Value = serde_json::from_str(&c.arguments).unwrap_or_else(|_| json!({}));
                out.push(Block::ToolUse {
                    id: &c.id,
                    name: &c.name,
                    input,
                });
            }
            out
        }
    }
}

/// The request body, serialized straight from the borrowed conversation.
pub(crate) fn request_body(model: &str, temperature: Option<f64>, max_tokens: u32, req: &ChatRequest<'_>) -> Vec<u8> {
    let system: Vec<SystemBlock<'_>> = req
        .messages
        .iter()
        .filter(|m| m.role == Role::System)
        .map(|m| SystemBlock {
            kind: "text",
            text: &m.content,
        })
        .collect();
    // Anthropic wants alternating user/assistant turns: merge neighbours.
    let mut messages: Vec<WireMessage<'_>> = Vec::new();
    for m in req.messages.iter().filter(|m| m.role != Role::System) {
        let role = if m.role == Role::Assistant { "assistant" } else { "user" };
        let b = blocks(m);
        if b.is_empty() {
            continue;
        }
        match messages.last_mut() {
            Some(last) if last.role == role => last.content.extend(b),
            _ => messages.push(WireMessage { role, content: b }),
        }
    }
    let body = WireBody {
        model,
        max_tokens,
        messages,
        system,
        temperature: req.temperature.or(temperature).map(|t| t.min(1.0)),
        tools: req
            .tools
            .iter()
            .map(|t| WireTool {
                name: &t.name,
                description: &t.description,
                input_schema: &t.parameters,
            })
            .collect(),
        stream: req.deltas.is_some(),
    };
    let mut body = serde_json::to_value(&body).expect("a request body of strings and JSON values always serializes");
    mark_cache(&mut body);
    serde_json::to_vec(&body).expect("a JSON value always serializes")
}

/// Prompt-cache breakpoints (`cache_control`): on the first system block
/// (which covers the tools before it), or on the last tool when there is no
/// system prompt; and on the last block of the last message, so the next
/// request of the conversation reads everything before it from the cache.
/// Later system messages (a note at the end of a turn) come after the
/// first block and leave the cached prefix alone.
fn mark_cache(body: &mut Value) {
    fn last_of(v: Option<&mut Value>) -> Option<&mut Value> {
        v.and_then(Value::as_array_mut).and_then(|a| a.last_mut())
    }
    let mark = || json!({"type": "ephemeral"});
    match body
        .get_mut("system")
        .and_then(Value::as_array_mut)
        .and_then(|a| a.first_mut())
    {
        Some(first) => first["cache_control"] = mark(),
        None => {
            if let Some(tool) = last_of(body.get_mut("tools")) {
                tool["cache_control"] = mark();
            }
        }
    }
    let message = last_of(body.get_mut("messages"));
    if let Some(block) = last_of(message.and_then(|m| m.get_mut("content"))) {
        block["cache_control"] = mark();
    }
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
    let usage = v.get("usage").map(Usage::from_anthropic);
    Some(ChatResponse {
        text,
        tool_calls,
        usage: usage.unwrap_or_default(),
        truncated: v.get("stop_reason").and_then(Value::as_str) == Some("max_tokens"),
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
    fn limits(&self) -> &super::ContextLimits {
        &self.http.limits
    }

    async fn chat(&self, req: &ChatRequest<'_>) -> Result<ChatResponse, ProviderError> {
        let mut headers = vec![("anthropic-version", "2023-06-01".to_string())];
        if let Some(key) = &self.http.api_key {
            headers.push(("x-api-key", key.clone()));
        }
        let body = request_body(
            &self.http.model,
            self.http.temperature,
            req.max_tokens.unwrap_or(self.http.limits.answer_room),
            req,
        );
        super::stream::call(&self.http, (&self.messages_url, &headers), body, req.deltas, &WIRE).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::ToolSpec;
    use std::sync::Arc;

    #[test]
    fn the_body_has_the_messages_shape() {
        let call = ToolCall {
            id: "t1".into(),
            name: "shell".into(),
            arguments: r#"{"command":"ls"}"#.into(),
        };
        let messages = vec![
            ChatMessage::system("be brief"),
            ChatMessage::system("be kind"),
            ChatMessage::user("list"),
            ChatMessage {
                tool_calls: vec![call.clone()],
                ..ChatMessage::assistant("looking")
            },
            ChatMessage::tool_result(&call, "a"),
            ChatMessage::user("thanks"),
        ];
        let tools = vec![Arc::new(ToolSpec::new(
            "shell",
            "Run a command",
            &json!({"type": "object"}),
        ))];
        let req = ChatRequest {
            messages: &messages,
            tools: &tools,
            temperature: Some(1.5),
            deltas: None,
            max_tokens: None,
        };
        let body: Value = serde_json::from_slice(&request_body("claude", None, 4096, &req)).unwrap();
        assert_eq!(
            body,
            json!({
                "model": "claude",
                "max_tokens": 4096,
                "system": [
                    {"type": "text", "text": "be brief", "cache_control": {"type": "ephemeral"}},
                    {"type": "text", "text": "be kind"}
                ],
                "temperature": 1.0,
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "list"}]},
                    {"role": "assistant", "content": [
                        {"type": "text", "text": "looking"},
                        {"type": "tool_use", "id": "t1", "name": "shell", "input": {"command": "ls"}}
                    ]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "t1", "content": "a"},
                        {"type": "text", "text": "thanks", "cache_control": {"type": "ephemeral"}}
                    ]}
                ],
                "tools": [{"name": "shell", "description": "Run a command", "input_schema": {"type": "object"}}]
            })
        );
        // Without a system prompt the mark goes on the last tool.
        let bare = [ChatMessage::user("hi")];
        let body: Value = serde_json::from_slice(&request_body(
            "claude",
            None,
            10,
            &ChatRequest { messages: &bare, ..req },
        ))
        .unwrap();
        assert!(body.get("system").is_none(), "{body}");
        assert_eq!(body["tools"][0]["cache_control"]["type"], "ephemeral");
    }

    #[test]
    fn usage_counts_cache_reads_and_writes_in_the_prompt() {
        let u = Usage::from_anthropic(
            &json!({"input_tokens": 5, "cache_read_input_tokens": 900, "cache_creation_input_tokens": 100, "output_tokens": 7}),
        );
        assert_eq!((u.input_tokens, u.cached_tokens, u.output_tokens), (1005, 900, 7));
    }
}

#[cfg(test)]
mod pictures {
    use super::*;
    use crate::message::Image;

    #[test]
    fn a_message_with_a_picture_gets_an_image_block_before_its_text() {
        let mut user = ChatMessage::user("what is this?");
        user.images
            .push(Image::new(b"RIFF\x04\0\0\0WEBP").expect("webp is taken"));
        let messages = vec![user];
        let req = ChatRequest::of(&messages);
        let body: Value = serde_json::from_slice(&request_body("m", None, 100, &req)).unwrap();
        assert_eq!(
            body["messages"][0]["content"],
            json!([
                {"type": "image", "source": {"type": "base64", "media_type": "image/webp", "data": "UklGRgQAAABXRUJQ"}},
                {"type": "text", "text": "what is this?", "cache_control": {"type": "ephemeral"}}
            ])
        );
    }
}
