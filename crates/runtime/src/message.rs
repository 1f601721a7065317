//! The conversation vocabulary the agent loop speaks with providers.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

/// Who a message is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The system prompt.
    System,
    /// A person (or a note given as data).
    User,
    /// The model.
    Assistant,
    /// A tool result.
    Tool,
}

impl Role {
    /// The stored word.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::System => "system",
            Self::User => "user",
            Self::Assistant => "assistant",
            Self::Tool => "tool",
        }
    }
}

/// One tool call the model asked for. `arguments` is the raw JSON text the
/// model produced; it may be malformed and is parsed by the loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call id (results name it).
    pub id: String,
    /// The tool (for calls and results) or the tool spec's name.
    pub name: String,
    /// The JSON arguments, as the model wrote them.
    pub arguments: String,
}

/// One message of a conversation, in the shape both APIs share.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// Who it is from.
    pub role: Role,
    /// Its text.
    #[serde(default)]
    pub content: String,
    /// Calls an assistant message makes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// The call a tool result answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// For tool results: the tool's name (Anthropic and logs need it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Pictures shown with a user message (to agents with `vision`).
    /// Never stored: the transcript keeps the text, which names the files.
    #[serde(skip)]
    pub images: Vec<Image>,
}

/// A picture for the model: its media type and its bytes in base64.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub mime: String,
    /// The picture, base64 (standard alphabet, padded).
    pub base64: std::sync::Arc<str>,
}

impl Image {
    /// The media types both provider APIs accept as image content.
    pub const MEDIA_TYPES: [&'static str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

    /// `bytes` as an image, or `None` when they are not a picture of a
    /// type providers take. The type is read from the bytes themselves: a
    /// sender's label is not trusted (a mislabelled file would make the
    /// provider refuse the whole request).
    pub fn new(bytes: &[u8]) -> Option<Self> {
        use base64::Engine;
        let mime = Self::sniff(bytes)?;
        Some(Self {
            mime: mime.to_string(),
            base64: base64::engine::general_purpose::STANDARD.encode(bytes).into(),
        })
    }

    /// The picture type `bytes` start like, among [`Self::MEDIA_TYPES`].
    pub fn sniff(bytes: &[u8]) -> Option<&'static str> {
        if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
            Some("image/png")
        } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
            Some("image/jpeg")
        } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
            Some("image/gif")
        } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
            Some("image/webp")
        } else {
            None
        }
    }

    /// As a `data:` URL (OpenAI-compatible `image_url`).
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.mime, self.base64)
    }
}

impl ChatMessage {
    /// A system message.
    pub fn system(text: impl Into<String>) -> Self {
        Self::plain(Role::System, text)
    }
    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        Self::plain(Role::User, text)
    }
    /// An assistant message without calls.
    pub fn assistant(text: impl Into<String>) -> Self {
        Self::plain(Role::Assistant, text)
    }
    /// The result of `call`.
    pub fn tool_result(call: &ToolCall, content: impl Into<String>) -> Self {
        Self {
            role: Role::Tool,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: Some(call.id.clone()),
            name: Some(call.name.clone()),
            images: Vec::new(),
        }
    }
    fn plain(role: Role, text: impl Into<String>) -> Self {
        Self {
            role,
            content: text.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            name: None,
            images: Vec::new(),
        }
    }
}

/// What a model is told about one tool. Built once per tool and shared by
/// every request that offers it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The tool (for calls and results) or the tool spec's name.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON Schema of the arguments object, serialized once: requests copy
    /// it as text.
    pub parameters: Box<RawValue>,
}

impl ToolSpec {
    /// A spec; the parameters' JSON is rendered once.
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: &Value) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            parameters: serde_json::value::to_raw_value(parameters).expect("a JSON value always serializes"),
        }
    }
}

/// Token usage of one or more model calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Answer tokens.
    pub output_tokens: u64,
    /// Of the prompt tokens, those the server served from its cache (a
    /// prefix it had seen): OpenAI's and llama.cpp's
    /// `prompt_tokens_details.cached_tokens`, Anthropic's
    /// `cache_read_input_tokens`.
    #[serde(default)]
    pub cached_tokens: u64,
}

impl Usage {
    /// Add another call's usage.
    pub fn add(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cached_tokens += other.cached_tokens;
    }
    /// Anthropic's usage object: its `input_tokens` counts only what was
    /// neither read from nor written to the cache, so the prompt is the sum
    /// of the three.
    pub(crate) fn from_anthropic(u: &serde_json::Value) -> Self {
        let n = |k: &str| u.get(k).and_then(serde_json::Value::as_u64).unwrap_or(0);
        let cached = n("cache_read_input_tokens");
        Self {
            input_tokens: n("input_tokens") + cached + n("cache_creation_input_tokens"),
            output_tokens: n("output_tokens"),
            cached_tokens: cached,
        }
    }

    /// Prompt and answer tokens together.
    pub fn total(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }
}
