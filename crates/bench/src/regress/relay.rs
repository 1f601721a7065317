//! The floor of the comparison: the least a Telegram gateway can do on the
//! same stand-ins. Long-poll `getUpdates`, ask the model once per message,
//! post the answer; no sessions, no history, no checks.
//!
//! Raw, it stores nothing. With a store (`--store DIR`, the "stored floor"
//! of `compare --floor stored`) it also makes the writes that let a
//! gateway killed at any moment lose and repeat nothing, through the
//! gateway's own store on SQLite: each poll's messages taken with the
//! cursor in one write, each answer queued with its message's done mark
//! before it is sent, and the delivered mark after (docs/performance.md).
//! With an agent's configuration as well (`--config`, the "agent floor" of
//! `compare --floor agent`), it sends the model what that agent sends
//! (`agent_request.rs`) instead of a bare question.

use serde_json::{Value, json};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use switchboard_store::{NewInbound, QueuedReply, Store};

use super::agent_request::{AgentRequest, streamed_text};

/// The channel name the stored floor writes its rows under.
const CHANNEL: &str = "telegram.relay";

/// Relay every message of the Bot API at `api` (token `token`) through the
/// OpenAI-compatible model at `model` until killed; with `store`, keep the
/// durable-delivery rows in a SQLite database in that folder; with
/// `agent` (a configuration and one of its agents; needs `store`), send
/// that agent's request.
pub(crate) async fn relay(
    api: &str,
    token: &str,
    model: &str,
    store: Option<&Path>,
    agent: Option<(&Path, &str)>,
) -> anyhow::Result<ExitCode> {
    let store = match store {
        Some(dir) => Some(Store::open(&format!("sqlite://{}/relay.db", dir.display())).await?),
        None => None,
    };
    let request = match (agent, &store) {
        (Some((config, name)), Some(store)) => {
            let r = AgentRequest::of(config, name, store.clone())?;
            eprintln!("relay: sending agent '{name}''s request ({} tools)", r.count);
            Some(Arc::new(r))
        }
        (Some(_), None) => anyhow::bail!("--config needs --store: the agent floor keeps the durable-delivery rows too"),
        (None, _) => None,
    };
    let http = reqwest::Client::new();
    let base = format!("{}/bot{token}", api.trim_end_matches('/'));
    let mut offset = 0i64;
    loop {
        let mut polled: Value = http
            .post(format!("{base}/getUpdates"))
            .json(&json!({"offset": offset, "timeout": 25}))
            .send()
            .await?
            .json()
            .await?;
        let updates = match polled["result"].take() {
            Value::Array(updates) => updates,
            _ => Vec::new(),
        };
        for update in &updates {
            offset = offset.max(update["update_id"].as_i64().unwrap_or(0) + 1);
        }
        let taken = match &store {
            Some(store) => take(store, &updates, offset).await?,
            None => vec![None; updates.len()],
        };
        for (update, key) in updates.into_iter().zip(taken) {
            let (http, base, model, store) = (http.clone(), base.clone(), model.to_string(), store.clone());
            let request = request.clone();
            tokio::spawn(async move {
                let message = &update["message"];
                let stored = store.as_ref().zip(key.as_deref());
                if let Err(e) = answer(&http, (&base, &model, request.as_deref()), message, stored).await {
                    eprintln!("relay: {e}");
                }
            });
        }
    }
}

/// Store a poll's messages with the cursor after them (one write); each
/// message's inbox key.
async fn take(store: &Store, updates: &[Value], offset: i64) -> anyhow::Result<Vec<Option<String>>> {
    let messages: Vec<NewInbound> = updates
        .iter()
        .map(|u| {
            let m = &u["message"];
            let chat = m["chat"]["id"].to_string();
            let id = m["message_id"].to_string();
            NewInbound {
                key: format!("{CHANNEL}:{chat}:{id}"),
                channel: CHANNEL.into(),
                chat,
                platform_id: id,
                sender: m["from"]["id"].to_string(),
                body: m.to_string(),
            }
        })
        .collect();
    let new = store
        .inbox()
        .take(CHANNEL, &messages, Some(&offset.to_string()), None)
        .await?
        .fresh;
    // A redelivered message was taken before: not answered again.
    Ok(messages
        .into_iter()
        .zip(new)
        .map(|(m, new)| new.then_some(m.key))
        .collect())
}

async fn answer(
    http: &reqwest::Client,
    (base, model, request): (&str, &str, Option<&AgentRequest>),
    message: &Value,
    stored: Option<(&Store, &str)>,
) -> anyhow::Result<()> {
    let asked = message["text"].as_str().unwrap_or("");
    let url = format!("{}/chat/completions", model.trim_end_matches('/'));
    let text = match request {
        Some(r) => {
            let body = r.body("instant", asked)?;
            let resp = http
                .post(url)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body)
                .send()
                .await?;
            streamed_text(resp).await?
        }
        None => {
            let asked = json!({"model": "instant", "messages": [{"role": "user", "content": asked}]});
            let mut reply: Value = http.post(url).json(&asked).send().await?.json().await?;
            match reply["choices"][0]["message"]["content"].take() {
                Value::String(s) => s,
                _ => String::new(),
            }
        }
    };
    let send = json!({"chat_id": message["chat"]["id"], "text": text});
    if let Some((store, key)) = stored {
        let (chat, body) = (message["chat"]["id"].to_string(), send.to_string());
        let queued = QueuedReply {
            channel: CHANNEL,
            chat: &chat,
            thread: None,
            reply_to: None,
            body: &body,
        };
        store.inbox().finish(key, Some(&queued)).await?;
    }
    http.post(format!("{base}/sendMessage"))
        .json(&send)
        .send()
        .await?
        .error_for_status()?;
    if let Some((store, key)) = stored {
        store.inbox().reply_delivered(key);
    }
    Ok(())
}
