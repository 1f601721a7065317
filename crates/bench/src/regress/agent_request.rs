//! What the floor sends the model for `compare --floor agent`: the request
//! the configuration's agent sends, not a bare question. Its system prompt,
//! the schemas of every tool the model sees in its turn (the runtime's own
//! list, from the same configuration), and a streamed answer read back to
//! its end, event by event. The tools' part of the body is rendered once
//! and copied into each request as text, as the gateway copies each
//! schema (docs/performance.md).

use serde::Serialize;
use serde_json::{Value, json, value::RawValue};
use std::sync::Arc;
use switchboard_store::Store;

/// The parts of one agent's request that do not change between messages.
pub(crate) struct AgentRequest {
    system: Option<String>,
    /// `[{"type":"function","function":{...}}, ...]`, rendered once.
    tools: Box<RawValue>,
    /// How many tools, for the start-up line.
    pub(crate) count: usize,
}

impl AgentRequest {
    /// The request of `agent` in the configuration at `config`; the runtime
    /// is built on `store` (it opens nothing else).
    pub(crate) fn of(config: &std::path::Path, agent: &str, store: Store) -> anyhow::Result<Self> {
        let config = switchboard_config::Config::load(config)?;
        let Some(cfg) = config.agents.get(agent) else {
            anyhow::bail!("the configuration has no agent '{agent}'; pass --agent with one of its [agents.*]");
        };
        let system = Some(cfg.system_prompt.clone()).filter(|s| !s.is_empty());
        let runtime = switchboard_runtime::Runtime::new(Arc::new(config), store)?;
        let specs = runtime.offered_specs(agent);
        let tools: Vec<Value> = specs
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                }})
            })
            .collect();
        Ok(Self {
            system,
            tools: RawValue::from_string(serde_json::to_string(&tools)?)?,
            count: specs.len(),
        })
    }

    /// The body asking `model` about `text`, as a streamed chat completion
    /// (the fields in the gateway's order; the tools copied as text).
    pub(crate) fn body(&self, model: &str, text: &str) -> anyhow::Result<Vec<u8>> {
        let mut messages = Vec::with_capacity(2);
        if let Some(system) = &self.system {
            messages.push(Message {
                role: "system",
                content: system,
            });
        }
        messages.push(Message {
            role: "user",
            content: text,
        });
        Ok(serde_json::to_vec(&Body {
            model,
            messages,
            stream: true,
            stream_options: StreamOptions { include_usage: true },
            tools: (self.count > 0).then_some(&*self.tools),
        })?)
    }
}

#[derive(Serialize)]
struct Message<'a> {
    role: &'static str,
    content: &'a str,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    messages: Vec<Message<'a>>,
    stream: bool,
    stream_options: StreamOptions,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a RawValue>,
}

/// The text of a streamed chat completion (server-sent events), read as
/// its pieces arrive; each event's JSON is read, as a gateway must.
pub(crate) async fn streamed_text(resp: reqwest::Response) -> anyhow::Result<String> {
    use futures::StreamExt;
    let mut text = String::new();
    let mut pending: Vec<u8> = Vec::new();
    let mut body = resp.error_for_status()?.bytes_stream();
    while let Some(chunk) = body.next().await {
        pending.extend_from_slice(&chunk?);
        while let Some(end) = pending.windows(2).position(|w| w == b"\n\n") {
            let event: Vec<u8> = pending.drain(..end + 2).collect();
            for line in event.split(|b| *b == b'\n') {
                let Some(data) = line.strip_prefix(b"data:") else {
                    continue;
                };
                let data = data.trim_ascii();
                if data == b"[DONE]" {
                    // Read on to the end, as the gateway does (the
                    // connection goes back to the pool).
                    continue;
                }
                let v: Value = serde_json::from_slice(data)?;
                if let Some(piece) = v["choices"][0]["delta"]["content"].as_str() {
                    text.push_str(piece);
                }
            }
        }
    }
    Ok(text)
}
