//! `init --wait-here` on Telegram: the operator sends `/here` in the ops
//! group, and the group's id and the sender (as approver) are read from
//! that message, so nobody has to look up a chat id. Only `/here` with the
//! one-time code printed on the operator's terminal counts (anyone who can
//! write to the bot could send a bare `/here` first), only in a group (a
//! direct message is no ops room), never from a bot; on a terminal the
//! operator also confirms who sent it.

use super::ask::Asker;
use super::render::Bot;
use serde_json::Value;
use std::time::{Duration, Instant};

/// How long to wait for `/here`.
const WAIT: Duration = Duration::from_secs(300);

/// The ops group's chat id and the sender, as `tg:<id>`.
pub(super) async fn wait(a: &Bot, ask: &mut Asker) -> Result<(String, String), String> {
    let token = a.secret.as_deref().unwrap_or_default();
    let api = a
        .api_url
        .as_deref()
        .unwrap_or("https://api.telegram.org")
        .trim_end_matches('/');
    let base = format!("{api}/bot{token}");
    let code = format!("{:06}", uuid::Uuid::new_v4().as_u128() % 1_000_000);
    println!("… add the bot to your ops group and send `/here {code}` there (waiting up to 5 minutes)");
    let client = reqwest::Client::new();
    let started = Instant::now();
    let mut offset = 0i64;
    while started.elapsed() < WAIT {
        let body = serde_json::json!({"offset": offset, "timeout": 20, "allowed_updates": ["message"]});
        let answer = client
            .post(format!("{base}/getUpdates"))
            .json(&body)
            .timeout(Duration::from_secs(30))
            .send()
            .await
            .map_err(|e| format!("Telegram could not be asked: {}", e.without_url()))?;
        let updates: Value = answer
            .json()
            .await
            .map_err(|_| "Telegram answered no JSON".to_string())?;
        for u in updates["result"].as_array().into_iter().flatten() {
            offset = offset.max(u["update_id"].as_i64().unwrap_or(0) + 1);
            let m = &u["message"];
            let text = m["text"].as_str().unwrap_or("");
            let mut words = text.split_whitespace();
            let command = words.next().unwrap_or("");
            let is_here = (command == "/here" || command.starts_with("/here@")) && words.next() == Some(code.as_str());
            let group = matches!(m["chat"]["type"].as_str(), Some("group" | "supergroup"))
                && m["from"]["is_bot"] != serde_json::Value::Bool(true);
            let (Some(chat), Some(from)) = (m["chat"]["id"].as_i64(), m["from"]["id"].as_i64()) else {
                continue;
            };
            if !(is_here && group) {
                continue;
            }
            let who = match m["from"]["username"].as_str() {
                Some(u) => format!("@{u}"),
                None => format!(
                    "no username, named \"{}\"",
                    m["from"]["first_name"].as_str().unwrap_or("?")
                ),
            };
            let title: String = m["chat"]["title"]
                .as_str()
                .unwrap_or("?")
                .chars()
                .filter(|c| !c.is_control())
                .collect();
            let who: String = who.chars().filter(|c| !c.is_control()).collect();
            if ask.may_retry() {
                let question = format!(
                    "/here came from tg:{from} ({who}) in \"{title}\" ({chat}): take them as approver and that group as the ops room? (yes/no)"
                );
                if !ask
                    .value(None, "--approver", &question)?
                    .to_ascii_lowercase()
                    .starts_with('y')
                {
                    println!("… not taken; waiting for another /here");
                    continue;
                }
            }
            // Consume it, so the gateway does not answer it later.
            let _ = client
                .post(format!("{base}/getUpdates"))
                .json(&serde_json::json!({"offset": offset, "timeout": 0}))
                .send()
                .await;
            println!("✓ the ops group is {chat}; tg:{from} ({who}) approves");
            return Ok((chat.to_string(), format!("tg:{from}")));
        }
    }
    Err("no /here arrived in 5 minutes: pass --ops-room and --approver instead".into())
}
