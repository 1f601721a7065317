//! The bot's own reactions, as Discord keeps them: `PUT` and `DELETE`
//! `/channels/{c}/messages/{m}/reactions/{emoji}/@me` (204), on a message
//! that must exist in that channel (404 "Unknown Message" otherwise); the
//! message's `reactions` list says which emoji the bot has on it.

use super::{FakeDiscord, Shared};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

fn refused(code: u32, message: &str) -> Response {
    (
        StatusCode::NOT_FOUND,
        axum::Json(json!({"code": code, "message": message})),
    )
        .into_response()
}

/// The stored message `message` of `channel`, changed by `change`.
fn with_message(shared: &Shared, channel: u64, message: u64, change: impl FnOnce(&mut Value)) -> Response {
    let mut s = shared.lock();
    let Some(messages) = s.messages.get_mut(&channel) else {
        return refused(10003, "Unknown Channel");
    };
    let id = message.to_string();
    let Some(m) = messages.iter_mut().find(|m| m["id"] == json!(id)) else {
        return refused(10008, "Unknown Message");
    };
    change(m);
    StatusCode::NO_CONTENT.into_response()
}

pub(crate) async fn add(
    State(s): State<Shared>,
    Path((channel, message, emoji)): Path<(u64, u64, String)>,
) -> Response {
    with_message(&s, channel, message, |m| {
        let list = m["reactions"].as_array().cloned().unwrap_or_default();
        if !list
            .iter()
            .any(|r| r["emoji"]["name"] == json!(emoji) && r["me"] == true)
        {
            let mut list = list;
            list.push(json!({"count": 1, "me": true, "emoji": {"id": null, "name": emoji}}));
            m["reactions"] = Value::Array(list);
        }
    })
}

pub(crate) async fn remove(
    State(s): State<Shared>,
    Path((channel, message, emoji)): Path<(u64, u64, String)>,
) -> Response {
    with_message(&s, channel, message, |m| {
        if let Some(list) = m["reactions"].as_array_mut() {
            list.retain(|r| !(r["emoji"]["name"] == json!(emoji) && r["me"] == true));
        }
    })
}

impl FakeDiscord {
    /// The emoji the bot has on message `message` of `channel` now.
    pub fn own_reactions(&self, channel: u64, message: u64) -> Vec<String> {
        let s = self.shared.lock();
        let id = message.to_string();
        s.messages
            .get(&channel)
            .and_then(|ms| ms.iter().find(|m| m["id"] == json!(id)))
            .and_then(|m| m["reactions"].as_array())
            .map(|list| {
                list.iter()
                    .filter(|r| r["me"] == true)
                    .filter_map(|r| r["emoji"]["name"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }
}
