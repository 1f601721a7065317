//! OpenAI-compatible chat completions with native tool calls (OpenAI,
//! OpenRouter, Ollama, vLLM, llama.cpp, LM Studio).

use super::http::HttpSettings;
use super::{ChatRequest, ChatResponse, Provider, ProviderError};
use crate::message::{ChatMessage, Role, ToolCall, Usage};
use async_trait::async_trait;
use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;
use switchboard_config::ProviderKind;

const WIRE: super::stream::Wire = super::stream::Wire {
    api: super::stream::Api::OpenAi,
    plain: parse_response,
    missing: "chat completion without choices[0].message",
};

pub(crate) struct OpenAiProvider {
    http: HttpSettings,
    /// Where chat completions are posted.
    chat_url: reqwest::Url,
}

impl OpenAiProvider {
    pub(super) fn new(http: HttpSettings) -> Result<Self, ProviderError> {
        let chat_url = http.endpoint(&format!("{}/chat/completions", http.base_url))?;
        Ok(Self { http, chat_url })
    }
}

/// One message as the chat completions API wants it, borrowed.
#[derive(Serialize)]
struct WireMessage<'a> {
    role: &'static str,
    content: WireContent<'a>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<WireCall<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
}

/// A message's text, or (with pictures) its text and pictures as parts.
#[derive(Serialize)]
#[serde(untagged)]
enum WireContent<'a> {
    Text(&'a str),
    Parts(Vec<WirePart<'a>>),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WirePart<'a> {
    Text { text: &'a str },
    ImageUrl { image_url: WireImage },
}

#[derive(Serialize)]
struct WireImage {
    url: String,
}

#[derive(Serialize)]
struct WireCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunctionCall<'a>,
}

#[derive(Serialize)]
struct WireFunctionCall<'a> {
    name: &'a str,
    arguments: &'a str,
}

#[derive(Serialize)]
struct WireTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunction<'a>,
}

#[derive(Serialize)]
struct WireFunction<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a RawValue,
}

#[derive(Serialize)]
struct WireBody<'a> {
    model: &'a str,
    messages: Vec<WireMessage<'a>>,
    stream: bool,
    /// With `stream`: ask for the usage in the last chunk.
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
}

fn wire_message(m: &ChatMessage) -> WireMessage<'_> {
    let tool_calls = if m.role == Role::Assistant {
        m.tool_calls
            .iter()
            .map(|c| WireCall {
                id: &c.id,
                kind: "function",
                function: WireFunctionCall {
                    name: &c.name,
                    arguments: &c.arguments,
                },
            })
            .collect()
    } else {
        Vec::new()
    };
    let content = if m.images.is_empty() {
        WireContent::Text(&m.content)
    } else {
        let pictures = m.images.iter().map(|i| WirePart::ImageUrl {
            image_url: WireImage { url: i.data_url() },
        });
        WireContent::Parts(
            std::iter::once(WirePart::Text { text: &m.content })
                .chain(pictures)
                .collect(),
        )
    };
    WireMessage {
        role: m.role.as_str(),
        content,
        tool_calls,
        tool_call_id: m.tool_call_id.as_deref(),
    }
}

/// The request body, serialized straight from the borrowed conversation.
pub(crate) fn request_body(model: &str, temperature: Option<f64>, req: &ChatRequest<'_>) -> Vec<u8> {
    let body = WireBody {
        model,
        messages: req.messages.iter().map(wire_message).collect(),
        stream: req.deltas.is_some(),
        stream_options: req.deltas.map(|_| serde_json::json!({"include_usage": true})),
        temperature: req.temperature.or(temperature),
        max_tokens: req.max_tokens,
        tools: req
            .tools
            .iter()
            .map(|t| WireTool {
                kind: "function",
                function: WireFunction {
                    name: &t.name,
                    description: &t.description,
                    parameters: &t.parameters,
                },
            })
            .collect(),
    };
    serde_json::to_vec(&body).expect("a request body of strings and JSON values always serializes")
}

pub(crate) fn parse_response(v: &Value) -> Option<ChatResponse> {
    let choice = v.get("choices")?.get(0)?;
    let message = choice.get("message")?;
    let truncated = choice.get("finish_reason").and_then(Value::as_str) == Some("length");
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
        cached_tokens: u
            .pointer("/prompt_tokens_details/cached_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(0),
    });
    Some(ChatResponse {
        text,
        tool_calls,
        usage: usage.unwrap_or_default(),
        truncated,
    })
}

use switchboard_config::is_local_server;

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
    fn limits(&self) -> &super::ContextLimits {
        &self.http.limits
    }

    /// llama.cpp's server says its context size at `/props` (beside `/v1`).
    /// Asked once, and only of servers on this machine or the local network
    /// (an IP address, `localhost` or a name without dots): hosted APIs do
    /// not have it.
    async fn learn_window(&self) {
        if self.http.limits.window().is_some() || !is_local_server(&self.http.base_url) {
            return;
        }
        self.http
            .asked_window
            .get_or_init(|| async {
                let root = self.http.base_url.trim_end_matches("/v1");
                let answer = self
                    .http
                    .client
                    .get(format!("{root}/props"))
                    .timeout(std::time::Duration::from_secs(5))
                    .send()
                    .await;
                let Ok(r) = answer else { return };
                let Ok(v) = r.json::<Value>().await else { return };
                let n_ctx = v["default_generation_settings"]["n_ctx"].as_u64().or_else(|| v["n_ctx"].as_u64());
                if let Some(n) = n_ctx.and_then(|n| u32::try_from(n).ok()).filter(|n| *n > 0) {
                    tracing::info!(provider = %self.http.name, context_window = n, "the model server said its context size");
                    self.http.limits.set_window(n);
                }
            })
            .await;
    }

    async fn chat(&self, req: &ChatRequest<'_>) -> Result<ChatResponse, ProviderError> {
        let mut headers = Vec::new();
        if let Some(key) = &self.http.api_key {
            headers.push(("authorization", format!("Bearer {key}")));
        }
        let body = request_body(&self.http.model, self.http.temperature, req);
        let endpoint = (&self.chat_url, headers.as_slice());
        if !self.http.text_calls || req.tools.is_empty() {
            return super::stream::call(&self.http, endpoint, body, req.deltas, &WIRE).await;
        }
        // Calls the model may write as text: held back from the stream
        // until the answer is complete, then lifted out of it.
        let hold = req.deltas.map(super::holdback::Holdback::new);
        let filter = |d: super::Delta<'_>| {
            if let Some(h) = &hold {
                h.on(d);
            }
        };
        let deltas = hold.as_ref().map(|_| super::Deltas(&filter));
        let mut response = super::stream::call(&self.http, endpoint, body, deltas, &WIRE).await?;
        let lifted = response.tool_calls.is_empty()
            && !response.truncated
            && super::text_calls::lift_into(&mut response, req.tools);
        if let Some(h) = &hold {
            let names: Vec<&str> = req.tools.iter().map(|t| t.name.as_str()).collect();
            h.finish(lifted || super::text_calls::before_a_call(&response.text, &names).is_some());
        }
        if lifted {
            tracing::info!(provider = %self.http.name, calls = response.tool_calls.len(), "tool calls written as text were taken as calls");
        }
        Ok(response)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::ToolSpec;
    use serde_json::json;

    #[test]
    fn a_server_address_that_is_no_url_stops_the_provider_at_build() {
        for kind in ["openai", "anthropic"] {
            for url in ["http://user:secret@bad host/v1", "localhost:8080/v1"] {
                let config: switchboard_config::ProviderConfig =
                    serde_json::from_value(json!({"kind": kind, "model": "m", "base_url": url})).unwrap();
                let Err(e) = crate::provider::build_provider("local", &config) else {
                    panic!("{kind}: a provider was built for {url}");
                };
                let said = e.to_string();
                assert!(said.contains("[providers.local].base_url"), "{kind} {url}: {said}");
                assert!(
                    !said.contains("secret"),
                    "{kind}: the address leaked into the error: {said}"
                );
            }
        }
    }

    #[test]
    fn only_self_hosted_servers_are_asked_for_their_context() {
        for local in [
            "http://127.0.0.1:8080/v1",
            "http://localhost:11434/v1",
            "http://gpu-box:8000/v1",
            "http://[::1]:8080/v1",
        ] {
            assert!(super::is_local_server(local), "{local}");
        }
        for hosted in ["https://api.openai.com/v1", "https://openrouter.ai/api/v1", "not a url"] {
            assert!(!super::is_local_server(hosted), "{hosted}");
        }
    }
    use std::sync::Arc;

    #[test]
    fn the_body_has_the_chat_completions_shape() {
        let call = ToolCall {
            id: "c1".into(),
            name: "shell".into(),
            arguments: r#"{"command":"ls"}"#.into(),
        };
        let messages = vec![
            ChatMessage::system("be brief"),
            ChatMessage::user("list"),
            ChatMessage {
                tool_calls: vec![call.clone()],
                ..ChatMessage::assistant("")
            },
            ChatMessage::tool_result(&call, "a\nb"),
        ];
        let tools = vec![Arc::new(ToolSpec::new(
            "shell",
            "Run a command",
            &json!({"type": "object", "properties": {"command": {"type": "string"}}}),
        ))];
        let req = ChatRequest {
            messages: &messages,
            tools: &tools,
            temperature: None,
            deltas: None,
            max_tokens: None,
        };
        let body: Value = serde_json::from_slice(&request_body("m", Some(0.2), &req)).unwrap();
        assert_eq!(
            body,
            json!({
                "model": "m",
                "stream": false,
                "temperature": 0.2,
                "messages": [
                    {"role": "system", "content": "be brief"},
                    {"role": "user", "content": "list"},
                    {"role": "assistant", "content": "", "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "shell", "arguments": "{\"command\":\"ls\"}"}}
                    ]},
                    {"role": "tool", "content": "a\nb", "tool_call_id": "c1"}
                ],
                "tools": [{"type": "function", "function": {
                    "name": "shell",
                    "description": "Run a command",
                    "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}
                }}]
            })
        );
        let bare: Value = serde_json::from_slice(&request_body("m", None, &ChatRequest { tools: &[], ..req })).unwrap();
        assert!(
            bare.get("tools").is_none() && bare.get("temperature").is_none(),
            "{bare}"
        );
    }
}

#[cfg(test)]
mod cached {
    use serde_json::json;

    #[test]
    fn cached_prompt_tokens_are_read_from_the_usage() {
        let v = json!({
            "choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1200, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 1024}}
        });
        let u = super::parse_response(&v).unwrap().usage;
        assert_eq!((u.input_tokens, u.cached_tokens, u.output_tokens), (1200, 1024, 5));
        let price = switchboard_config::Price {
            input: 2.0,
            output: 8.0,
            cached_input: Some(0.5),
        };
        // 176 fresh at 2, 1,024 cached at 0.5, 5 out at 8 (micro-dollars).
        assert_eq!(
            price.cost_micros(u.input_tokens, u.cached_tokens, u.output_tokens),
            352 + 512 + 40
        );
        let unset = switchboard_config::Price {
            cached_input: None,
            ..price
        };
        assert_eq!(
            unset.cost_micros(1200, 1024, 0),
            2400,
            "cached tokens cost the input price unless priced"
        );
    }
}

#[cfg(test)]
mod pictures {
    use super::*;
    use crate::message::Image;
    use serde_json::json;

    #[test]
    fn a_message_with_a_picture_becomes_text_and_image_url_parts() {
        let mut user = ChatMessage::user("what is this?");
        user.images
            .push(Image::new(b"\x89PNG\r\n\x1a\n!").expect("png is taken"));
        let messages = vec![user];
        let req = ChatRequest::of(&messages);
        let body: Value = serde_json::from_slice(&request_body("m", None, &req)).unwrap();
        assert_eq!(
            body["messages"][0]["content"],
            json!([
                {"type": "text", "text": "what is this?"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgoh"}}
            ])
        );
        assert!(Image::new(b"%PDF-1.7").is_none(), "not a picture, whatever its label");
        assert_eq!(Image::sniff(&[0xFF, 0xD8, 0xFF, 0xE0]), Some("image/jpeg"));
        assert_eq!(Image::sniff(b"GIF89a..."), Some("image/gif"));
        assert_eq!(Image::sniff(b"RIFF\0\0\0\0WEBPVP8 "), Some("image/webp"));
        assert_eq!(Image::sniff(b"RIFF\0\0\0\0WAVEfmt "), None);
    }
}
