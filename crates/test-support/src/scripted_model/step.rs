//! One step of a scripted model's script: what it answers, to which
//! requests, how fast.

use super::last_message_text;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

pub(super) type Matcher = Arc<dyn Fn(&Value) -> bool + Send + Sync>;

/// What a step answers.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A plain answer.
    Text(String),
    /// (tool name, raw JSON arguments text) pairs.
    ToolCalls(Vec<(String, String)>),
    /// An HTTP error status with a body that must never leak to users.
    Status(u16),
    /// 429 with a Retry-After header (seconds).
    RateLimited(u64),
}

/// One scripted answer, optionally only for requests that match.
#[derive(Clone)]
pub struct Step {
    pub(super) matcher: Option<Matcher>,
    pub(super) reply: Reply,
    pub(super) delay: Duration,
    pub(super) usage: (u64, u64),
    /// Stopped at the output limit (`finish_reason: "length"`,
    /// `stop_reason: "max_tokens"`).
    pub(super) cut_off: bool,
    /// For streamed requests: the pause between pieces.
    pub(super) stream_every: Duration,
}

impl Step {
    /// Answer with `t`.
    pub fn text(t: impl Into<String>) -> Self {
        Self::new(Reply::Text(t.into()))
    }

    /// Answer with one call of tool `name` with `args`.
    pub fn tool_call(name: &str, args: Value) -> Self {
        Self::new(Reply::ToolCalls(vec![(name.to_string(), args.to_string())]))
    }

    /// Several calls in one response (or malformed argument text).
    pub fn tool_calls(calls: &[(&str, &str)]) -> Self {
        Self::new(Reply::ToolCalls(
            calls.iter().map(|(n, a)| (n.to_string(), a.to_string())).collect(),
        ))
    }

    /// Fail with HTTP `code`.
    pub fn status(code: u16) -> Self {
        Self::new(Reply::Status(code))
    }

    /// Answer 429 with `Retry-After`.
    pub fn rate_limited(retry_after_secs: u64) -> Self {
        Self::new(Reply::RateLimited(retry_after_secs))
    }

    fn new(reply: Reply) -> Self {
        Self {
            matcher: None,
            reply,
            delay: Duration::ZERO,
            usage: (10, 5),
            cut_off: false,
            stream_every: Duration::ZERO,
        }
    }

    /// The answer stopped at the model's output limit.
    pub fn cut_off(mut self) -> Self {
        self.cut_off = true;
        self
    }

    /// Only answer requests whose last message contains `needle`.
    pub fn when_last_contains(self, needle: &str) -> Self {
        let needle = needle.to_string();
        self.when(move |req| last_message_text(req).contains(&needle))
    }

    /// Only answer requests for which `f` is true.
    pub fn when(mut self, f: impl Fn(&Value) -> bool + Send + Sync + 'static) -> Self {
        self.matcher = Some(Arc::new(f));
        self
    }

    /// Answer only after `d`.
    pub fn delay(mut self, d: Duration) -> Self {
        self.delay = d;
        self
    }

    /// When the request asks for a stream, send the pieces `every` apart
    /// (a word of text, half of a tool call's arguments).
    pub fn streamed(mut self, every: Duration) -> Self {
        self.stream_every = every;
        self
    }

    /// Report these token counts.
    pub fn usage(mut self, input: u64, output: u64) -> Self {
        self.usage = (input, output);
        self
    }
}
