//! `setMessageReaction` as Telegram checks it, recorded for the tests.

use super::{Shared, fail, ok};
use axum::response::Response;
use serde_json::{Value, json};

/// Telegram's reaction emoji a bot may set (Bot API `ReactionTypeEmoji`).
const REACTIONS: &[&str] = &[
    "👍",
    "👎",
    "❤",
    "🔥",
    "🥰",
    "👏",
    "😁",
    "🤔",
    "🤯",
    "😱",
    "🤬",
    "😢",
    "🎉",
    "🤩",
    "🤮",
    "💩",
    "🙏",
    "👌",
    "🕊",
    "🤡",
    "🥱",
    "🥴",
    "😍",
    "🐳",
    "❤‍🔥",
    "🌚",
    "🌭",
    "💯",
    "🤣",
    "⚡",
    "🍌",
    "🏆",
    "💔",
    "🤨",
    "😐",
    "🍓",
    "🍾",
    "💋",
    "🖕",
    "😈",
    "😴",
    "😭",
    "🤓",
    "👻",
    "👨‍💻",
    "👀",
    "🎃",
    "🙈",
    "😇",
    "😨",
    "🤝",
    "✍",
    "🤗",
    "🫡",
    "🎅",
    "🎄",
    "☃",
    "💅",
    "🤪",
    "🗿",
    "🆒",
    "💘",
    "🙉",
    "🦄",
    "😘",
    "💊",
    "🙊",
    "😎",
    "👾",
    "🤷‍♂",
    "🤷",
    "🤷‍♀",
    "😡",
];

/// `setMessageReaction` as Telegram checks it: a message id, at most one
/// reaction for a bot, and only emoji from Telegram's list. Recorded with
/// the time it arrived (`_at_ms`).
pub(crate) fn set_message_reaction(shared: &Shared, method: String, mut args: Value) -> Response {
    if args["chat_id"].is_null() || args["message_id"].as_i64().is_none_or(|id| id <= 0) {
        return fail(400, "Bad Request: message to react not found", None);
    }
    let reactions = args["reaction"].as_array().cloned().unwrap_or_default();
    if reactions.len() > 1 {
        return fail(400, "Bad Request: REACTIONS_TOO_MANY", None);
    }
    if reactions
        .iter()
        .any(|r| r["type"] != "emoji" || !REACTIONS.contains(&r["emoji"].as_str().unwrap_or_default()))
    {
        return fail(400, "Bad Request: REACTION_INVALID", None);
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    args["_at_ms"] = json!(now);
    shared.state.lock().unwrap().calls.push((method, args));
    ok(json!(true))
}
