//! Chats and people as the Bot API describes them.

use super::{BOT_ID, BOT_USERNAME};
use serde_json::{Value, json};

/// A chat as Telegram describes it.
pub fn private_chat(user_id: i64, name: &str) -> Value {
    json!({"id": user_id, "type": "private", "first_name": name})
}

/// A forum supergroup.
pub fn supergroup(chat_id: i64, title: &str) -> Value {
    json!({"id": chat_id, "type": "supergroup", "title": title, "is_forum": true})
}

/// The chat a bot's call names by `chat_id` (negative: a group).
pub(crate) fn chat_for(chat_id: &Value) -> Value {
    let id = chat_id
        .as_i64()
        .or_else(|| chat_id.as_str().and_then(|s| s.parse().ok()))
        .unwrap_or(0);
    if id < 0 {
        supergroup(id, "group")
    } else {
        private_chat(id, "person")
    }
}

/// A person (`from`) with this id and first name.
pub fn user(id: i64, name: &str) -> Value {
    json!({"id": id, "is_bot": false, "first_name": name, "username": name.to_lowercase()})
}

pub(crate) fn bot_user() -> Value {
    json!({
        "id": BOT_ID, "is_bot": true, "first_name": "Switchboard", "username": BOT_USERNAME,
        "can_join_groups": true, "can_read_all_group_messages": false, "supports_inline_queries": false,
        "can_connect_to_business": false, "has_main_web_app": false
    })
}
