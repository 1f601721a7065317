//! HTTP plumbing shared by providers: one client per provider, timeouts,
//! retries with backoff on 429/5xx/connect errors, and error mapping that
//! keeps URLs, keys and bodies out of user-visible messages.

use super::ProviderError;
use std::time::Duration;
use switchboard_config::{ProviderConfig, ProviderKind};

/// Connections kept open to a model server between requests. A burst opens
/// as many as it needs; past this many, each is closed when its request
/// ends. With 16, a burst of 1,000 people opened a new connection for
/// almost every request (about a tenth of the gateway's CPU in connect and
/// close); with 128, still 1.9× the raw relay's connections; with 512,
/// 1.1×, the burst 0.90× as long and RSS after it unchanged
/// (docs/performance.md). Idle connections close after the client's idle
/// timeout (90 s).
const IDLE_CONNECTIONS: usize = 512;

pub(crate) struct HttpSettings {
    pub name: String,
    pub kind: ProviderKind,
    pub model: String,
    pub base_url: String,
    pub api_key: Option<String>,
    pub temperature: Option<f64>,
    pub max_retries: u32,
    pub client: reqwest::Client,
    pub limits: super::ContextLimits,
    /// Whether the server was asked for its context size already.
    pub asked_window: tokio::sync::OnceCell<()>,
    /// Whether calls written as text are read (`text_tool_calls`).
    pub text_calls: bool,
}

impl HttpSettings {
    pub(super) fn from_config(name: &str, c: &ProviderConfig) -> Result<Self, ProviderError> {
        let api_key = match &c.api_key {
            None => None,
            Some(secret) => Some(
                secret
                    .resolve()
                    .map_err(|e| ProviderError::Misconfigured(name.to_string(), e.to_string()))?,
            ),
        };
        // No redirects: the key goes to the configured server only.
        let client = switchboard_http::client_builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(c.timeout_secs))
            .connect_timeout(Duration::from_secs(10))
            .pool_max_idle_per_host(IDLE_CONNECTIONS)
            .build()
            .map_err(|e| ProviderError::Misconfigured(name.to_string(), e.without_url().to_string()))?;
        Ok(Self {
            name: name.to_string(),
            kind: c.kind,
            model: c.model.clone(),
            base_url: c.base_url().to_string(),
            api_key,
            temperature: c.temperature,
            max_retries: c.max_retries,
            client,
            limits: super::ContextLimits::new(c.context_window, c.max_tokens),
            asked_window: tokio::sync::OnceCell::new(),
            text_calls: c.reads_text_calls(),
        })
    }

    /// The address `url` of this provider's server, parsed once when the
    /// provider is built (not at every call). The error leaves the address
    /// out: it may carry credentials, and it reaches the chat.
    pub(super) fn endpoint(&self, url: &str) -> Result<reqwest::Url, ProviderError> {
        let bad = |why: String| {
            ProviderError::Misconfigured(
                self.name.clone(),
                format!("its base_url {why}; fix [providers.{}].base_url", self.name),
            )
        };
        let parsed = reqwest::Url::parse(url).map_err(|e| bad(format!("is not a URL ({e})")))?;
        if !matches!(parsed.scheme(), "http" | "https") || !parsed.has_host() {
            return Err(bad("is not an http:// or https:// address with a host".into()));
        }
        Ok(parsed)
    }

    /// POST the JSON `body` to `url` with `headers`, retrying transient failures.
    /// Returns the parsed JSON of a 2xx answer.
    pub(super) async fn post_json(
        &self,
        url: &reqwest::Url,
        headers: &[(&str, String)],
        body: bytes::Bytes,
    ) -> Result<serde_json::Value, ProviderError> {
        self.with_retries(|| async {
            let resp = self.send(url, headers, body.clone()).await?;
            resp.json().await.map_err(|e| {
                tracing::warn!(provider = %self.name, error = %e.without_url(), "unreadable model response");
                (ProviderError::InvalidResponse(self.name.clone()), None)
            })
        })
        .await
    }

    /// POST `body` for a streamed answer: transient failures are retried
    /// until the answer starts; then each piece of its body goes to
    /// `on_chunk` as it arrives. A connection lost mid-answer is an error
    /// (not retried here: text may have been shown already).
    pub(super) async fn post_stream(
        &self,
        url: &reqwest::Url,
        headers: &[(&str, String)],
        body: bytes::Bytes,
        on_chunk: &mut (dyn FnMut(&[u8]) + Send),
    ) -> Result<(), ProviderError> {
        use futures::StreamExt;
        let resp = self.with_retries(|| self.send(url, headers, body.clone())).await?;
        let mut stream = resp.bytes_stream();
        while let Some(chunk) = stream.next().await {
            match chunk {
                Ok(bytes) => on_chunk(&bytes),
                Err(e) => {
                    let timed_out = e.is_timeout();
                    tracing::warn!(provider = %self.name, error = %e.without_url(), "the model's stream broke off");
                    return Err(if timed_out {
                        ProviderError::Timeout(self.name.clone())
                    } else {
                        ProviderError::Unreachable(self.name.clone())
                    });
                }
            }
        }
        Ok(())
    }

    /// Run `op`, retrying transient failures with backoff (or the
    /// server's `Retry-After`) up to `max_retries` times.
    async fn with_retries<T, F, Fut>(&self, mut op: F) -> Result<T, ProviderError>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<T, (ProviderError, Option<Duration>)>>,
    {
        let mut attempt = 0;
        loop {
            match op().await {
                Ok(v) => return Ok(v),
                Err((e, retry_after)) if e.is_transient() && attempt < self.max_retries => {
                    let backoff = retry_after
                        .unwrap_or_else(|| Duration::from_millis(250 * 2u64.pow(attempt)))
                        .min(Duration::from_secs(30));
                    tracing::warn!(provider = %self.name, attempt, error = %e, ?backoff, "retrying model call");
                    tokio::time::sleep(backoff).await;
                    attempt += 1;
                }
                Err((e, _)) => return Err(e),
            }
        }
    }

    /// One POST; a 2xx answer (its body unread), or the error and the
    /// server's `Retry-After`.
    async fn send(
        &self,
        url: &reqwest::Url,
        headers: &[(&str, String)],
        body: bytes::Bytes,
    ) -> Result<reqwest::Response, (ProviderError, Option<Duration>)> {
        let name = || self.name.clone();
        let mut req = self
            .client
            .post(url.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body);
        for (k, v) in headers {
            req = req.header(*k, v);
        }
        let resp = req.send().await.map_err(|e| {
            let timed_out = e.is_timeout();
            tracing::warn!(provider = %self.name, error = %e.without_url(), "model request failed");
            let err = if timed_out {
                ProviderError::Timeout(name())
            } else {
                ProviderError::Unreachable(name())
            };
            (err, None)
        })?;
        let status = resp.status();
        if status.is_success() {
            return Ok(resp);
        }
        let retry_after = resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .map(Duration::from_secs_f64);
        let body = resp.bytes().await.unwrap_or_default();
        tracing::warn!(provider = %self.name, status = status.as_u16(), body_len = body.len(), "model provider error status");
        let err = match status.as_u16() {
            401 | 403 => ProviderError::Auth(name()),
            429 => ProviderError::RateLimited(name()),
            400 | 413 | 422 if is_context_overflow(&body) => {
                let n_ctx = serde_json::from_slice::<serde_json::Value>(&body)
                    .ok()
                    .and_then(|v| v["error"]["n_ctx"].as_u64())
                    .and_then(|n| u32::try_from(n).ok());
                tracing::warn!(provider = %self.name, ?n_ctx, "the prompt exceeded the model's context");
                ProviderError::ContextOverflow(name(), n_ctx)
            }
            code => ProviderError::Http(name(), code),
        };
        Err((err, retry_after))
    }
}

/// Whether an error answer says the prompt was longer than the context:
/// OpenAI's `context_length_exceeded`, llama.cpp's
/// `exceed_context_size_error`, Anthropic's "prompt is too long", vLLM's
/// "maximum context length", Ollama's and others' wordings.
fn is_context_overflow(body: &[u8]) -> bool {
    const MARKERS: &[&str] = &[
        "context_length_exceeded",
        "exceed_context_size",
        "exceeds the available context size",
        "prompt is too long",
        "maximum context length",
        "context window",
        "too many tokens",
        "input is too long",
    ];
    let text = String::from_utf8_lossy(body).to_lowercase();
    MARKERS.iter().any(|m| text.contains(m))
}

#[cfg(test)]
mod overflow_tests {
    #[test]
    fn each_servers_wording_is_recognised() {
        for body in [
            r#"{"error":{"message":"This model's maximum context length is 8192 tokens","type":"invalid_request_error","code":"context_length_exceeded"}}"#,
            r#"{"error":{"code":400,"message":"request (4233 tokens) exceeds the available context size (4096 tokens)","type":"exceed_context_size_error","n_prompt_tokens":4233,"n_ctx":4096}}"#,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
            r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens","code":400}"#,
        ] {
            assert!(super::is_context_overflow(body.as_bytes()), "{body}");
        }
        assert!(!super::is_context_overflow(br#"{"error":{"message":"invalid model"}}"#));
    }
}
