//! A scripted model server on 127.0.0.1.
//!
//! Each request consumes the first unconsumed [`Step`] whose matcher accepts
//! it (steps without a matcher accept anything), waits the step's delay and
//! answers with its reply. Every request body is recorded for assertions.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::serve::ListenerExt;
use axum::{Json, Router};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod inspect;
mod parse;
mod step;
mod stream;

pub use inspect::{last_message_text, offered_tools, tokens_of, tool_results};
use parse::parse;
pub use step::{Reply, Step};

#[derive(Default)]
struct Shared {
    steps: Vec<Option<Step>>,
    /// Off for benchmarks: keeping every request body costs memory and time.
    skip_recording: bool,
    /// Whether any step ever had a matcher (then bodies must be parsed).
    any_matcher: bool,
    requests: Vec<Value>,
    counter: u64,
    in_flight: u32,
    max_in_flight: u32,
    /// Connections accepted.
    connections: u64,
    /// When each request arrived (cheap; kept even without recording).
    arrivals: Vec<std::time::Instant>,
    /// A context size in tokens (a token counted as four bytes of the
    /// request body): longer requests are refused as a real server would.
    context: Option<Context>,
    /// Requests refused for their length.
    overflows: u32,
    /// When set, a request no step matches is answered `echo: <its last
    /// message>` after this long.
    echo: Option<Duration>,
    /// The echo repeats every person message after the last answer, joined
    /// with " + " (a merged burst), not only the last.
    echo_joined: bool,
}

#[derive(Clone, Copy)]
struct Context {
    tokens: u64,
    /// Refuse in llama.cpp's shape (with `n_ctx`) rather than OpenAI's.
    llama_cpp: bool,
}

/// Counts a request as in flight until dropped (also when the client hangs up).
struct Flight(Arc<Mutex<Shared>>);

impl Flight {
    fn start(shared: &Arc<Mutex<Shared>>) -> Self {
        let mut s = shared.lock().unwrap();
        s.in_flight += 1;
        s.max_in_flight = s.max_in_flight.max(s.in_flight);
        s.arrivals.push(std::time::Instant::now());
        Flight(shared.clone())
    }
}

impl Drop for Flight {
    fn drop(&mut self) {
        self.0.lock().unwrap().in_flight -= 1;
    }
}

/// A running scripted model server; stops when dropped.
pub struct ScriptedModel {
    addr: std::net::SocketAddr,
    shared: Arc<Mutex<Shared>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for ScriptedModel {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl ScriptedModel {
    /// Listen on a free loopback port.
    pub async fn start() -> Self {
        Self::start_at("127.0.0.1:0").await.expect("bind loopback")
    }

    /// Listen on `addr` (a model server's usual port, say); `None` when
    /// something else holds it.
    pub async fn start_at(addr: &str) -> Option<Self> {
        let listener = tokio::net::TcpListener::bind(addr).await.ok()?;
        Some(Self::serve(listener))
    }

    fn serve(listener: tokio::net::TcpListener) -> Self {
        let shared = Arc::new(Mutex::new(Shared::default()));
        let app = Router::new()
            .route("/v1/chat/completions", post(openai))
            .route("/v1/messages", post(anthropic))
            .route("/props", axum::routing::get(props))
            .route("/v1/models", axum::routing::get(models))
            .with_state(shared.clone());
        let addr = listener.local_addr().unwrap();
        let counted = shared.clone();
        let listener = listener.tap_io(move |_| counted.lock().unwrap().connections += 1);
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self { addr, shared, task }
    }

    /// Base URL for `[providers.x].base_url`, ending in `/v1`.
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Add a step to the script.
    pub fn push(&self, step: Step) -> &Self {
        let mut s = self.shared.lock().unwrap();
        s.any_matcher |= step.matcher.is_some();
        s.steps.push(Some(step));
        self
    }

    /// How many requests were answered (recorded or not).
    pub fn served(&self) -> u64 {
        self.shared.lock().unwrap().counter
    }

    /// Refuse requests longer than `tokens` (see `tokens_of`) with HTTP 400
    /// in the shape of llama.cpp's server (`llama_cpp`, which says `n_ctx`),
    /// or of OpenAI (OpenAI endpoint) and Anthropic (Anthropic endpoint);
    /// answers report the request's token count as its prompt tokens.
    pub fn with_context(&self, tokens: u64, llama_cpp: bool) -> &Self {
        self.shared.lock().unwrap().context = Some(Context { tokens, llama_cpp });
        self
    }

    /// Answer every request that no step matches with `echo: <the person
    /// messages after its last answer, joined with " + ">`, after `delay`
    /// (a merged burst shows which messages its answer covers).
    pub fn echo_joined_after(&self, delay: Duration) -> &Self {
        self.echo_after(delay);
        self.shared.lock().unwrap().echo_joined = true;
        self
    }

    /// Answer every request that no step matches with `echo: <its last
    /// message>`, after `delay` (a model that takes its time).
    pub fn echo_after(&self, delay: Duration) -> &Self {
        let mut s = self.shared.lock().unwrap();
        // The echo reads the request's messages only (see `parse`).
        s.echo = Some(delay);
        self
    }

    /// Requests refused for exceeding the context.
    pub fn overflows(&self) -> u32 {
        self.shared.lock().unwrap().overflows
    }

    /// Stop keeping request bodies (benchmarks); `requests()` stays empty.
    pub fn without_recording(&self) -> &Self {
        self.shared.lock().unwrap().skip_recording = true;
        self
    }

    /// Every request body received so far.
    pub fn requests(&self) -> Vec<Value> {
        self.shared.lock().unwrap().requests.clone()
    }

    /// The most requests that were ever being answered at the same time.
    pub fn max_in_flight(&self) -> u32 {
        self.shared.lock().unwrap().max_in_flight
    }

    /// How many connections clients have opened so far.
    pub fn connections(&self) -> u64 {
        self.shared.lock().unwrap().connections
    }

    /// When each request arrived, in order.
    pub fn arrivals(&self) -> Vec<std::time::Instant> {
        self.shared.lock().unwrap().arrivals.clone()
    }

    /// Requests being answered right now.
    pub fn in_flight(&self) -> u32 {
        self.shared.lock().unwrap().in_flight
    }

    /// Steps not consumed yet.
    pub fn remaining(&self) -> usize {
        self.shared.lock().unwrap().steps.iter().filter(|s| s.is_some()).count()
    }
}

/// Take the matching step for `req`, recording the request.
fn take_step(shared: &Mutex<Shared>, req: Option<&Value>) -> (Option<Step>, u64) {
    let mut s = shared.lock().unwrap();
    if !s.skip_recording
        && let Some(req) = req
    {
        s.requests.push(req.clone());
    }
    s.counter += 1;
    let n = s.counter;
    let pos = s.steps.iter().position(|st| {
        st.as_ref()
            .is_some_and(|st| st.matcher.as_ref().is_none_or(|m| req.is_some_and(|r| m(r))))
    });
    let step = pos.and_then(|i| s.steps[i].take()).or_else(|| {
        let delay = s.echo?;
        let said = if s.echo_joined {
            inspect::trailing_person_texts(req?).join(" + ")
        } else {
            last_message_text(req?)
        };
        Some(Step::text(format!("echo: {said}")).delay(delay))
    });
    (step, n)
}

fn error_reply(reply: &Reply) -> Option<Response> {
    match reply {
        Reply::Status(code) => Some(
            (
                StatusCode::from_u16(*code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                "upstream exploded: internal-secret-detail sk-test-leak",
            )
                .into_response(),
        ),
        Reply::RateLimited(secs) => Some(
            (
                StatusCode::TOO_MANY_REQUESTS,
                [("retry-after", secs.to_string())],
                "slow down",
            )
                .into_response(),
        ),
        _ => None,
    }
}

/// The step for `req`, after its delay; the request body is dropped before
/// the wait so that many slow requests in flight hold little memory. Also
/// returns the requested model and whether it asked for a stream.
/// A 400 "context exceeded" answer when `body` is longer than the context.
fn over_context(shared: &Arc<Mutex<Shared>>, body: &Bytes, anthropic: bool) -> Option<Response> {
    let mut s = shared.lock().unwrap();
    let ctx = s.context?;
    let n = tokens_of(body.len());
    if n <= ctx.tokens {
        return None;
    }
    s.overflows += 1;
    let error = if anthropic {
        json!({"type": "error", "error": {"type": "invalid_request_error",
               "message": format!("prompt is too long: {n} tokens > {} maximum", ctx.tokens)}})
    } else if ctx.llama_cpp {
        json!({"error": {"code": 400, "type": "exceed_context_size_error", "n_prompt_tokens": n, "n_ctx": ctx.tokens,
               "message": format!("request ({n} tokens) exceeds the available context size ({} tokens), try increasing it", ctx.tokens)}})
    } else {
        json!({"error": {"type": "invalid_request_error", "code": "context_length_exceeded", "param": "messages",
               "message": format!("This model's maximum context length is {} tokens. However, your messages resulted in {n} tokens.", ctx.tokens)}})
    };
    Some((StatusCode::BAD_REQUEST, Json(error)).into_response())
}

/// llama.cpp's `/props`: its context size, when the model plays llama.cpp.
/// The model list, as OpenAI, llama.cpp and Ollama answer `GET /v1/models`.
async fn models() -> Response {
    Json(json!({"object": "list", "data": [{"id": "scripted", "object": "model", "owned_by": "switchboard-tests"}]}))
        .into_response()
}

async fn props(State(shared): State<Arc<Mutex<Shared>>>) -> Response {
    match shared.lock().unwrap().context {
        Some(c) if c.llama_cpp => Json(json!({"default_generation_settings": {"n_ctx": c.tokens}})).into_response(),
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

/// The prompt tokens to report: the request's length when a context is set.
fn prompt_tokens(shared: &Arc<Mutex<Shared>>, body_len: usize, step: &Step) -> u64 {
    match shared.lock().unwrap().context {
        Some(_) => tokens_of(body_len),
        None => step.usage.0,
    }
}

async fn next(shared: &Arc<Mutex<Shared>>, body: Bytes) -> Result<(Step, u64, Value, bool), Response> {
    let _flight = Flight::start(shared);
    let (req, model, stream) = parse(shared, &body).map_err(|e| (StatusCode::BAD_REQUEST, e).into_response())?;
    let (step, n) = take_step(shared, req.as_ref());
    drop((req, body));
    let Some(step) = step else {
        return Err((
            StatusCode::INTERNAL_SERVER_ERROR,
            "no scripted step matches this request",
        )
            .into_response());
    };
    tokio::time::sleep(step.delay).await;
    if let Some(r) = error_reply(&step.reply) {
        return Err(r);
    }
    Ok((step, n, model, stream))
}

async fn openai(State(shared): State<Arc<Mutex<Shared>>>, body: Bytes) -> Response {
    if let Some(refused) = over_context(&shared, &body, false) {
        return refused;
    }
    let body_len = body.len();
    let (step, n, model, stream) = match next(&shared, body).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    if stream {
        return stream::openai(&step, n, &model, prompt_tokens(&shared, body_len, &step));
    }
    let message = match &step.reply {
        Reply::Text(t) => json!({"role": "assistant", "content": t}),
        Reply::ToolCalls(calls) => json!({
            "role": "assistant",
            "content": null,
            "tool_calls": calls.iter().enumerate().map(|(i, (name, args))| json!({
                "id": format!("call_{n}_{i}"), "type": "function",
                "function": {"name": name, "arguments": args}
            })).collect::<Vec<_>>()
        }),
        _ => unreachable!("errors answered above"),
    };
    let finish_reason = match (&step.reply, step.cut_off) {
        (_, true) => "length",
        (Reply::ToolCalls(_), false) => "tool_calls",
        _ => "stop",
    };
    let prompt = prompt_tokens(&shared, body_len, &step);
    Json(json!({
        "id": format!("chatcmpl-{n}"),
        "object": "chat.completion",
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": step.usage.1, "total_tokens": prompt + step.usage.1}
    }))
    .into_response()
}

async fn anthropic(State(shared): State<Arc<Mutex<Shared>>>, body: Bytes) -> Response {
    if let Some(refused) = over_context(&shared, &body, true) {
        return refused;
    }
    let body_len = body.len();
    let (step, n, _, stream) = match next(&shared, body).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    if stream {
        return stream::anthropic(&step, n, prompt_tokens(&shared, body_len, &step));
    }
    let content = match &step.reply {
        Reply::Text(t) => vec![json!({"type": "text", "text": t})],
        Reply::ToolCalls(calls) => calls
            .iter()
            .enumerate()
            .map(|(i, (name, args))| {
                let input: Value = serde_json::from_str(args).unwrap_or(json!({}));
                json!({"type": "tool_use", "id": format!("toolu_{n}_{i}"), "name": name, "input": input})
            })
            .collect(),
        _ => unreachable!("errors answered above"),
    };
    let stop_reason = match (&step.reply, step.cut_off) {
        (_, true) => "max_tokens",
        (Reply::ToolCalls(_), false) => "tool_use",
        _ => "end_turn",
    };
    Json(json!({
        "id": format!("msg_{n}"),
        "type": "message",
        "role": "assistant",
        "content": content,
        "stop_reason": stop_reason,
        "usage": {"input_tokens": prompt_tokens(&shared, body_len, &step), "output_tokens": step.usage.1}
    }))
    .into_response()
}
