//! Streamed answers: Server-Sent Events read incrementally, and the two
//! APIs' chunk formats folded into one `ChatResponse` while text deltas are
//! handed on as they arrive (OpenAI-compatible `chat.completion.chunk`s,
//! tool-call argument fragments included; Anthropic's `message_start` /
//! `content_block_*` / `message_delta` events).

use super::http::HttpSettings;
use super::openai_chunk::{Chunk, with_chunk};
use super::{ChatResponse, ProviderError};
use crate::message::{ToolCall, Usage};
use serde_json::Value;

/// What a streaming call reports while it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delta<'a> {
    /// More of the answer's text.
    Text(&'a str),
    /// Forget the text reported so far: another provider starts again
    /// (after a failure), or the answer turned out to call tools.
    Reset,
}

/// Where deltas go (the caller's sink).
#[derive(Clone, Copy)]
pub struct Deltas<'a>(pub &'a (dyn Fn(Delta<'_>) + Send + Sync));

impl std::fmt::Debug for Deltas<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Deltas(..)")
    }
}

/// Which API's stream format to read.
#[derive(Clone, Copy)]
pub(crate) enum Api {
    OpenAi,
    Anthropic,
}

/// How one API's answers are read.
pub(crate) struct Wire {
    /// Its stream format.
    pub(crate) api: Api,
    /// Reads one plain JSON answer.
    pub(crate) plain: fn(&Value) -> Option<ChatResponse>,
    /// Logged when a plain answer lacks what `plain` needs.
    pub(crate) missing: &'static str,
}

/// One model call in either form: streamed when `deltas` is given,
/// otherwise one JSON answer.
pub(crate) async fn call(
    http: &HttpSettings,
    (url, headers): (&reqwest::Url, &[(&str, String)]),
    body: Vec<u8>,
    deltas: Option<Deltas<'_>>,
    wire: &Wire,
) -> Result<ChatResponse, ProviderError> {
    if let Some(deltas) = deltas {
        return streamed(http, url, headers, body.into(), deltas, wire.api, wire.plain).await;
    }
    let v = http.post_json(url, headers, body.into()).await?;
    (wire.plain)(&v).ok_or_else(|| {
        tracing::warn!(provider = %http.name, "{}", wire.missing);
        ProviderError::InvalidResponse(http.name.clone())
    })
}

/// A plain (not streamed) body kept for servers that ignore `stream`.
const MAX_PLAIN: usize = 8 * 1024 * 1024;

/// POST `body` asking for a stream and fold what comes back, handing text
/// to `deltas` as it arrives. A server that answers with one plain JSON
/// body instead is read with `plain` (its text is handed on at once).
pub(crate) async fn streamed(
    http: &HttpSettings,
    url: &reqwest::Url,
    headers: &[(&str, String)],
    body: bytes::Bytes,
    deltas: Deltas<'_>,
    api: Api,
    plain: fn(&Value) -> Option<ChatResponse>,
) -> Result<ChatResponse, ProviderError> {
    let invalid = || ProviderError::InvalidResponse(http.name.clone());
    let mut reader = SseReader::default();
    let (mut openai, mut anthropic) = (OpenAiFold::default(), AnthropicFold::default());
    let mut raw = Vec::new();
    let mut events = 0usize;
    http.post_stream(url, headers, body, &mut |chunk| {
        if events == 0 && raw.len() < MAX_PLAIN {
            raw.extend_from_slice(chunk);
        }
        reader.push(chunk, &mut |name, data| {
            events += 1;
            match api {
                Api::OpenAi => openai.data(data, deltas),
                Api::Anthropic => anthropic.event(name, data, deltas),
            }
        });
    })
    .await?;
    if events == 0 {
        let v: Value = serde_json::from_slice(&raw).map_err(|_| invalid())?;
        let r = plain(&v).ok_or_else(invalid)?;
        if !r.text.is_empty() {
            (deltas.0)(Delta::Text(&r.text));
        }
        return Ok(r);
    }
    let (broken, done, r) = match api {
        Api::OpenAi => (openai.broken, openai.done, openai.finish()),
        Api::Anthropic => (anthropic.broken, anthropic.done, anthropic.finish()),
    };
    if broken || (!done && r.text.is_empty() && r.tool_calls.is_empty()) {
        tracing::warn!(provider = %http.name, broken, done, "a streamed answer could not be read");
        return Err(invalid());
    }
    Ok(r)
}

/// Splits a byte stream into SSE events: `(event name, data)` per blank
/// line; comments and unknown fields are skipped; `\r\n` is accepted.
#[derive(Default)]
pub(crate) struct SseReader {
    pending: Vec<u8>,
    event: Option<String>,
    data: String,
}

impl SseReader {
    /// Feed `chunk`; `on` gets each complete event.
    pub(crate) fn push(&mut self, chunk: &[u8], on: &mut dyn FnMut(Option<&str>, &str)) {
        self.pending.extend_from_slice(chunk);
        while let Some(end) = self.pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                if !self.data.is_empty() || self.event.is_some() {
                    on(self.event.as_deref(), &self.data);
                }
                self.event = None;
                self.data.clear();
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
                None => (line, ""),
            };
            match field {
                "event" => self.event = Some(value.to_string()),
                "data" => {
                    if !self.data.is_empty() {
                        self.data.push('\n');
                    }
                    self.data.push_str(value);
                }
                _ => {}
            }
        }
    }
}

/// Folds OpenAI-compatible chunks.
#[derive(Default)]
pub(crate) struct OpenAiFold {
    text: String,
    /// By index: id, name, argument text.
    calls: Vec<(String, String, String)>,
    truncated: bool,
    usage: Usage,
    /// `[DONE]` arrived.
    pub(crate) done: bool,
    /// A chunk could not be read.
    pub(crate) broken: bool,
}

impl OpenAiFold {
    /// One `data:` payload.
    pub(crate) fn data(&mut self, data: &str, deltas: Deltas<'_>) {
        if data.trim() == "[DONE]" {
            self.done = true;
            return;
        }
        if !with_chunk(data, |chunk| self.chunk(chunk, deltas)) {
            self.broken = true;
        }
    }

    fn chunk(&mut self, chunk: Chunk<'_>, deltas: Deltas<'_>) {
        if let Some(u) = chunk.usage {
            self.usage = Usage {
                input_tokens: u.prompt_tokens.unwrap_or(0),
                output_tokens: u.completion_tokens.unwrap_or(0),
                cached_tokens: u.prompt_tokens_details.and_then(|d| d.cached_tokens).unwrap_or(0),
            };
        }
        let Some(choice) = chunk.choices.and_then(|c| c.into_iter().next()) else {
            return;
        };
        if choice.finish_reason.as_deref() == Some("length") {
            self.truncated = true;
        }
        let Some(delta) = choice.delta else { return };
        if let Some(t) = delta.content.filter(|t| !t.is_empty()) {
            self.text.push_str(&t);
            (deltas.0)(Delta::Text(&t));
        }
        for c in delta.tool_calls.into_iter().flatten() {
            let i = c.index.unwrap_or(0) as usize;
            if i >= 128 {
                self.broken = true;
                return;
            }
            while self.calls.len() <= i {
                self.calls.push(Default::default());
            }
            let slot = &mut self.calls[i];
            if let Some(id) = c.id {
                slot.0 = id.0.into_owned();
            }
            if let Some(f) = c.function {
                if let Some(n) = f.name {
                    slot.1.push_str(&n);
                }
                if let Some(a) = f.arguments {
                    slot.2.push_str(&a);
                }
            }
        }
    }

    /// The whole answer.
    pub(crate) fn finish(self) -> ChatResponse {
        answer(self.text, self.calls, self.usage, self.truncated)
    }
}

/// Folds Anthropic Messages stream events.
#[derive(Default)]
pub(crate) struct AnthropicFold {
    text: String,
    /// By content block index: `Some((id, name, input JSON text))` for tool use.
    blocks: Vec<Option<(String, String, String)>>,
    truncated: bool,
    usage: Usage,
    /// `message_stop` arrived.
    pub(crate) done: bool,
    /// An event could not be read, or the server sent an error event.
    pub(crate) broken: bool,
}

impl AnthropicFold {
    /// One event.
    pub(crate) fn event(&mut self, name: Option<&str>, data: &str, deltas: Deltas<'_>) {
        let Ok(v) = serde_json::from_str::<Value>(data) else {
            self.broken = true;
            return;
        };
        let kind = name.or_else(|| v.get("type").and_then(Value::as_str)).unwrap_or("");
        match kind {
            "message_start" => {
                if let Some(u) = v.pointer("/message/usage") {
                    let usage = Usage::from_anthropic(u);
                    self.usage.input_tokens = usage.input_tokens;
                    self.usage.cached_tokens = usage.cached_tokens;
                }
            }
            "content_block_start" => {
                let i = v.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
                if i >= 128 {
                    self.broken = true;
                    return;
                }
                while self.blocks.len() <= i {
                    self.blocks.push(None);
                }
                let block = &v["content_block"];
                if block["type"] == "tool_use" {
                    let s = |k: &str| block[k].as_str().unwrap_or_default().to_string();
                    self.blocks[i] = Some((s("id"), s("name"), String::new()));
                }
            }
            "content_block_delta" => {
                let i = v.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
                let d = &v["delta"];
                match d["type"].as_str() {
                    Some("text_delta") => {
                        if let Some(t) = d["text"].as_str().filter(|t| !t.is_empty()) {
                            self.text.push_str(t);
                            (deltas.0)(Delta::Text(t));
                        }
                    }
                    Some("input_json_delta") => {
                        if let (Some(Some(b)), Some(p)) = (self.blocks.get_mut(i), d["partial_json"].as_str()) {
                            b.2.push_str(p);
                        }
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                if v.pointer("/delta/stop_reason").and_then(Value::as_str) == Some("max_tokens") {
                    self.truncated = true;
                }
                if let Some(n) = v.pointer("/usage/output_tokens").and_then(Value::as_u64) {
                    self.usage.output_tokens = n;
                }
            }
            "message_stop" => self.done = true,
            "error" => self.broken = true,
            _ => {}
        }
    }

    /// The whole answer.
    pub(crate) fn finish(self) -> ChatResponse {
        answer(
            self.text,
            self.blocks.into_iter().flatten().collect(),
            self.usage,
            self.truncated,
        )
    }
}

/// A folded answer: calls without a name are dropped, a missing id or
/// argument text gets a default.
fn answer(text: String, calls: Vec<(String, String, String)>, usage: Usage, truncated: bool) -> ChatResponse {
    let tool_calls = calls
        .into_iter()
        .enumerate()
        .filter(|(_, (_, name, _))| !name.is_empty())
        .map(|(i, (id, name, arguments))| ToolCall {
            id: if id.is_empty() { format!("call_{i}") } else { id },
            name,
            arguments: if arguments.is_empty() { "{}".into() } else { arguments },
        })
        .collect();
    ChatResponse {
        text,
        tool_calls,
        usage,
        truncated,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    fn collect(f: impl FnOnce(Deltas<'_>)) -> Vec<String> {
        let seen = Mutex::new(Vec::new());
        let sink = |d: Delta<'_>| {
            seen.lock().unwrap().push(match d {
                Delta::Text(t) => t.to_string(),
                Delta::Reset => "<reset>".into(),
            });
        };
        f(Deltas(&sink));
        seen.into_inner().unwrap()
    }

    #[test]
    fn sse_events_split_across_chunks_and_lines() {
        let mut r = SseReader::default();
        let mut out = Vec::new();
        let mut on = |e: Option<&str>, d: &str| out.push((e.map(str::to_string), d.to_string()));
        r.push(b": comment\r\ndata: {\"a\":", &mut on);
        r.push(b"1}\r\n\r\nevent: x\ndata: one\ndata: two\n", &mut on);
        r.push(b"\n", &mut on);
        assert_eq!(
            out,
            [
                (None, "{\"a\":1}".to_string()),
                (Some("x".to_string()), "one\ntwo".to_string())
            ]
        );
    }

    #[test]
    fn openai_chunks_fold_into_text_tool_calls_and_usage() {
        let chunks = [
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"Hel"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"lo"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"shell","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"command\":"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"ls\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":7,"prompt_tokens_details":{"cached_tokens":8}}}"#,
            "[DONE]",
        ];
        let mut fold = OpenAiFold::default();
        let seen = collect(|d| {
            for c in chunks {
                fold.data(c, d);
            }
        });
        assert_eq!(seen, ["Hel", "lo"]);
        assert!(fold.done && !fold.broken);
        let r = fold.finish();
        assert_eq!(r.text, "Hello");
        assert_eq!(r.tool_calls.len(), 1);
        assert_eq!(
            (r.tool_calls[0].id.as_str(), r.tool_calls[0].name.as_str()),
            ("c1", "shell")
        );
        assert_eq!(r.tool_calls[0].arguments, r#"{"command":"ls"}"#);
        assert_eq!(
            (r.usage.input_tokens, r.usage.output_tokens, r.usage.cached_tokens),
            (12, 7, 8)
        );
        assert!(!r.truncated);
    }

    #[test]
    fn anthropic_events_fold_into_text_tool_calls_and_usage() {
        let events = [
            (
                "message_start",
                r#"{"type":"message_start","message":{"usage":{"input_tokens":30,"output_tokens":1}}}"#,
            ),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Let me "}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"look."}}"#,
            ),
            ("content_block_stop", r#"{"type":"content_block_stop","index":0}"#),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"file_read","input":{}}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\":"}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"a.txt\"}"}}"#,
            ),
            (
                "message_delta",
                r#"{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":15}}"#,
            ),
            ("message_stop", r#"{"type":"message_stop"}"#),
        ];
        let mut fold = AnthropicFold::default();
        let seen = collect(|d| {
            for (name, data) in events {
                fold.event(Some(name), data, d);
            }
        });
        assert_eq!(seen, ["Let me ", "look."]);
        assert!(fold.done && !fold.broken);
        let r = fold.finish();
        assert_eq!(r.text, "Let me look.");
        assert_eq!(r.tool_calls[0].name, "file_read");
        assert_eq!(r.tool_calls[0].arguments, r#"{"path":"a.txt"}"#);
        assert_eq!((r.usage.input_tokens, r.usage.output_tokens), (30, 15));
        assert!(r.truncated);
    }

    #[test]
    fn garbage_marks_the_stream_broken_without_panicking() {
        let mut fold = OpenAiFold::default();
        collect(|d| {
            fold.data("{not json", d);
        });
        assert!(fold.broken);
        let mut fold = AnthropicFold::default();
        collect(|d| {
            fold.event(
                Some("error"),
                r#"{"type":"error","error":{"type":"overloaded_error"}}"#,
                d,
            );
        });
        assert!(fold.broken);
    }
}
