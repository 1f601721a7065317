//! The floor of the comparison: the least a Telegram gateway can do on the
//! same stand-ins. Long-poll `getUpdates`, ask the model once per message,
//! post the answer; no storage, no sessions, no history, no checks.

use serde_json::{Value, json};
use std::process::ExitCode;

/// Relay every message of the Bot API at `api` (token `token`) through the
/// OpenAI-compatible model at `model` until killed.
pub(crate) async fn relay(api: &str, token: &str, model: &str) -> anyhow::Result<ExitCode> {
    let http = reqwest::Client::new();
    let base = format!("{}/bot{token}", api.trim_end_matches('/'));
    let mut offset = 0i64;
    loop {
        let polled: Value = http
            .post(format!("{base}/getUpdates"))
            .json(&json!({"offset": offset, "timeout": 25}))
            .send()
            .await?
            .json()
            .await?;
        for update in polled["result"].as_array().into_iter().flatten() {
            offset = offset.max(update["update_id"].as_i64().unwrap_or(0) + 1);
            let (http, base, model) = (http.clone(), base.clone(), model.to_string());
            let message = update["message"].clone();
            tokio::spawn(async move {
                if let Err(e) = answer(&http, &base, &model, &message).await {
                    eprintln!("relay: {e}");
                }
            });
        }
    }
}

async fn answer(http: &reqwest::Client, base: &str, model: &str, message: &Value) -> anyhow::Result<()> {
    let asked = json!({
        "model": "instant",
        "messages": [{"role": "user", "content": message["text"].as_str().unwrap_or("")}],
    });
    let reply: Value = http
        .post(format!("{}/chat/completions", model.trim_end_matches('/')))
        .json(&asked)
        .send()
        .await?
        .json()
        .await?;
    let text = reply["choices"][0]["message"]["content"].as_str().unwrap_or("");
    http.post(format!("{base}/sendMessage"))
        .json(&json!({"chat_id": message["chat"]["id"], "text": text}))
        .send()
        .await?
        .error_for_status()?;
    Ok(())
}
