//! `sendMessageDraft` (Bot API 9.3): a streamed answer shown in a private
//! chat as an animated draft, without posting a message. teloxide 0.17
//! has no binding for it, so it is called here directly.

use serde_json::{Value, json};
use std::time::Duration;
use switchboard_core::ChannelError;

/// Show `html` as draft `draft_id` in private chat `chat_id` (in `topic`).
pub(crate) async fn send(
    bot: &teloxide::Bot,
    client: &reqwest::Client,
    (chat_id, topic): (i64, Option<i32>),
    draft_id: u64,
    html: &str,
) -> Result<(), ChannelError> {
    let url = format!(
        "{}/bot{}/sendMessageDraft",
        bot.api_url().as_str().trim_end_matches('/'),
        bot.token()
    );
    let mut body = json!({"chat_id": chat_id, "draft_id": draft_id, "text": html, "parse_mode": "HTML"});
    if let Some(t) = topic {
        body["message_thread_id"] = json!(t);
    }
    let response = client
        .post(url)
        .timeout(Duration::from_secs(10))
        .json(&body)
        .send()
        .await
        // The URL holds the token: it is not told.
        .map_err(|_| ChannelError::Transient("the Bot API could not be reached".into()))?;
    let status = response.status().as_u16();
    let answer: Value = response.json().await.unwrap_or(Value::Null);
    if answer["ok"] == true {
        return Ok(());
    }
    let description = answer["description"].as_str().unwrap_or("no description").to_string();
    Err(match (status, answer["parameters"]["retry_after"].as_u64()) {
        (_, Some(secs)) => ChannelError::RateLimited(secs),
        (429, None) => ChannelError::RateLimited(1),
        (500..=599, _) => ChannelError::Transient(format!("sendMessageDraft: {status} {description}")),
        _ => ChannelError::Permanent(format!("sendMessageDraft: {status} {description}")),
    })
}
