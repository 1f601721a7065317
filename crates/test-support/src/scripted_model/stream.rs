//! The scripted model's streamed answers, for requests with `stream: true`:
//! OpenAI-compatible `chat.completion.chunk` events ending in `[DONE]`
//! (with the usage chunk `stream_options.include_usage` asks for), and
//! Anthropic's `message_start` … `message_stop` events. Text comes a word
//! at a time and tool-call arguments in two halves, each piece
//! `Step::streamed` apart, as real servers split them.

use super::{Reply, Step};
use axum::body::{Body, Bytes};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::time::Duration;

/// Words with their trailing spaces (so the pieces join to the text).
fn pieces(text: &str) -> Vec<&str> {
    text.split_inclusive(' ').collect()
}

fn halves(s: &str) -> [&str; 2] {
    let mut cut = s.len() / 2;
    while !s.is_char_boundary(cut) {
        cut += 1;
    }
    [&s[..cut], &s[cut..]]
}

/// An SSE body sending `events` `every` apart.
fn sse(events: Vec<String>, every: Duration) -> Response {
    let stream = futures_util::stream::unfold((events.into_iter(), true), move |(mut rest, first)| async move {
        let next = rest.next()?;
        if !first && !every.is_zero() {
            tokio::time::sleep(every).await;
        }
        Some((Ok::<_, std::convert::Infallible>(Bytes::from(next)), (rest, false)))
    });
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(stream),
    )
        .into_response()
}

/// The OpenAI-compatible stream of `step`.
pub(super) fn openai(step: &Step, n: u64, model: &Value, prompt: u64) -> Response {
    let chunk = |delta: Value, finish: Option<&str>| {
        let v = json!({
            "id": format!("chatcmpl-{n}"), "object": "chat.completion.chunk", "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]
        });
        format!("data: {v}\n\n")
    };
    let mut events = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    match &step.reply {
        Reply::Text(t) => events.extend(pieces(t).into_iter().map(|p| chunk(json!({"content": p}), None))),
        Reply::ToolCalls(calls) => {
            for (i, (name, args)) in calls.iter().enumerate() {
                let id = format!("call_{n}_{i}");
                events.push(chunk(
                    json!({"tool_calls": [{"index": i, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}),
                    None,
                ));
                for half in halves(args) {
                    events.push(chunk(
                        json!({"tool_calls": [{"index": i, "function": {"arguments": half}}]}),
                        None,
                    ));
                }
            }
        }
        _ => unreachable!("errors are answered before"),
    }
    let finish = match (&step.reply, step.cut_off) {
        (_, true) => "length",
        (Reply::ToolCalls(_), false) => "tool_calls",
        _ => "stop",
    };
    events.push(chunk(json!({}), Some(finish)));
    let usage =
        json!({"prompt_tokens": prompt, "completion_tokens": step.usage.1, "total_tokens": prompt + step.usage.1});
    events.push(format!(
        "data: {}\n\n",
        json!({"id": format!("chatcmpl-{n}"), "object": "chat.completion.chunk", "model": model, "choices": [], "usage": usage})
    ));
    events.push("data: [DONE]\n\n".into());
    sse(events, step.stream_every)
}

/// The Anthropic Messages stream of `step`.
pub(super) fn anthropic(step: &Step, n: u64, prompt: u64) -> Response {
    let event = |name: &str, v: Value| format!("event: {name}\ndata: {v}\n\n");
    let mut events = vec![event(
        "message_start",
        json!({"type": "message_start", "message": {"id": format!("msg_{n}"), "type": "message", "role": "assistant",
               "content": [], "usage": {"input_tokens": prompt, "output_tokens": 1}}}),
    )];
    match &step.reply {
        Reply::Text(t) => {
            events.push(event(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            ));
            for p in pieces(t) {
                events.push(event(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}}),
                ));
            }
            events.push(event(
                "content_block_stop",
                json!({"type": "content_block_stop", "index": 0}),
            ));
        }
        Reply::ToolCalls(calls) => {
            for (i, (name, args)) in calls.iter().enumerate() {
                events.push(event(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": i,
                           "content_block": {"type": "tool_use", "id": format!("toolu_{n}_{i}"), "name": name, "input": {}}}),
                ));
                for half in halves(args) {
                    events.push(event(
                        "content_block_delta",
                        json!({"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": half}}),
                    ));
                }
                events.push(event(
                    "content_block_stop",
                    json!({"type": "content_block_stop", "index": i}),
                ));
            }
        }
        _ => unreachable!("errors are answered before"),
    }
    let stop = match (&step.reply, step.cut_off) {
        (_, true) => "max_tokens",
        (Reply::ToolCalls(_), false) => "tool_use",
        _ => "end_turn",
    };
    events.push(event(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": step.usage.1}}),
    ));
    events.push(event("message_stop", json!({"type": "message_stop"})));
    sse(events, step.stream_every)
}
