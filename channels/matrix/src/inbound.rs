//! Room events (as JSON) turned into `Inbound` messages: text messages with
//! their thread, reply and mention, and reactions on open approval prompts
//! turned into `/approve` and `/deny` commands.

use crate::{REACTIONS, State};
use serde_json::Value;
use switchboard_core::{Action, ChatAddress, Inbound, UserId};

/// The bot, as inbound events see it.
pub(crate) struct Bot<'a> {
    pub channel: &'a str,
    pub user_id: &'a str,
    pub display_name: Option<&'a str>,
}

/// The room an event arrived in.
pub(crate) struct Room<'a> {
    pub id: &'a str,
    /// Two people at most: a direct conversation.
    pub direct: bool,
}

/// A reaction key without emoji variation selectors.
fn normalize(key: &str) -> String {
    key.chars().filter(|c| *c != '\u{fe0f}').collect()
}

/// Turn one timeline event into a message for the router, if it is one.
pub(crate) fn convert(ev: &Value, room: &Room, bot: &Bot, state: &State) -> Option<Inbound> {
    let sender = ev["sender"].as_str()?;
    if sender == bot.user_id {
        return None;
    }
    let event_id = ev["event_id"].as_str()?;
    let content = &ev["content"];
    let relates = &content["m.relates_to"];
    match ev["type"].as_str()? {
        "m.reaction" => approval_reaction(relates, sender, room, bot, state).map(|m| Inbound {
            event_id: Some(event_id.to_string()),
            ..m
        }),
        "m.room.message" => {
            // Edits are ignored: the original was already answered.
            if relates["rel_type"] == "m.replace" || content.get("m.new_content").is_some() {
                return None;
            }
            // Text, or a file whose caption (maybe empty) is the text.
            let (body, attachments) = if content["msgtype"] == "m.text" {
                (strip_reply_fallback(content["body"].as_str()?), Vec::new())
            } else {
                let (file, caption) = crate::media::attachment(content)?;
                (caption, vec![file])
            };
            let thread = (relates["rel_type"] == "m.thread")
                .then(|| relates["event_id"].as_str().map(str::to_string))
                .flatten();
            let falling_back = relates["is_falling_back"].as_bool().unwrap_or(false);
            let reply_to = relates["m.in_reply_to"]["event_id"]
                .as_str()
                .filter(|_| thread.is_none() || !falling_back)
                .map(str::to_string);
            let explicit = content["m.mentions"]["user_ids"]
                .as_array()
                .is_some_and(|ids| ids.iter().any(|u| u == bot.user_id));
            let named = find_name(&body, bot).is_some();
            let replied_to_bot = reply_to.as_deref().is_some_and(|r| state.sent.lock().contains(r));
            let bot_thread = thread.as_deref().is_some_and(|t| state.threads.lock().contains(t));
            let mentioned = explicit || named || replied_to_bot || bot_thread;
            let text = if named { strip_name(&body, bot) } else { body };
            // In group rooms every conversation is a thread: a message at
            // the top level starts one under itself, and the answer goes there.
            let thread = match thread {
                Some(t) => Some(t),
                None if !room.direct => Some(event_id.to_string()),
                None => None,
            };
            Some(Inbound {
                address: ChatAddress::new(bot.channel, room.id).with_thread(thread),
                sender: UserId(sender.to_string()),
                sender_name: sender.to_string(),
                text,
                message_id: Some(event_id.to_string()),
                event_id: None,
                mentioned,
                direct: room.direct,
                reply_to,
                guild: None,
                attachments,
                action: Action::Text,
            })
        }
        _ => None,
    }
}

/// ✅ ♾️ ❌ on an open approval prompt: a decision of its request.
fn approval_reaction(relates: &Value, sender: &str, room: &Room, bot: &Bot, state: &State) -> Option<Inbound> {
    if relates["rel_type"] != "m.annotation" {
        return None;
    }
    let target = relates["event_id"].as_str()?;
    let key = normalize(relates["key"].as_str()?);
    let id = state.prompts.lock().get(target).cloned()?;
    let choice = REACTIONS.iter().find(|(k, _)| normalize(k) == key)?.1;
    Some(Inbound {
        // The answer (decision or refusal) replies to the prompt.
        message_id: Some(target.to_string()),
        mentioned: true,
        direct: room.direct,
        action: Action::Decide { approval: id, choice },
        ..Inbound::new(ChatAddress::new(bot.channel, room.id), UserId(sender.to_string()), "")
    })
}

/// Older clients quote the message replied to as `> ` lines before a blank line.
fn strip_reply_fallback(body: &str) -> String {
    if !body.starts_with("> ") {
        return body.to_string();
    }
    match body.split_once("\n\n") {
        Some((quote, rest)) if quote.lines().all(|l| l.starts_with('>')) => rest.to_string(),
        _ => body.to_string(),
    }
}

/// Where the bot is named in `body` (byte range): its user id anywhere, or
/// its display name opening the message the way clients address people
/// (`Name: ...`, `Name, ...`) — a short name elsewhere in a sentence is
/// too often just a word.
fn find_name(body: &str, bot: &Bot) -> Option<(usize, usize)> {
    if let Some(i) = body.find(bot.user_id) {
        return Some((i, i + bot.user_id.len()));
    }
    let name = bot.display_name.map(str::trim).filter(|n| !n.is_empty())?;
    let head = body.get(..name.len())?;
    let addressed = body[name.len()..].starts_with([':', ',']) || body.len() == name.len();
    (head.eq_ignore_ascii_case(name) && addressed).then_some((0, name.len()))
}

/// `Bot: what's up` → `what's up`.
fn strip_name(body: &str, bot: &Bot) -> String {
    match find_name(body, bot) {
        Some((start, end)) => {
            let before = body[..start].trim_end();
            let rest = body[end..].trim_start_matches([':', ',']).trim_start();
            match (before.is_empty(), rest.is_empty()) {
                (true, _) => rest.trim_end().to_string(),
                (false, true) => before.to_string(),
                (false, false) => format!("{before} {}", rest.trim_end()),
            }
        }
        None => body.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use switchboard_core::ApprovalChoice;

    const BOT: Bot = Bot {
        channel: "matrix.main",
        user_id: "@bot:hs",
        display_name: Some("Switchboard"),
    };
    const GROUP: Room = Room {
        id: "!g:hs",
        direct: false,
    };
    const DM: Room = Room {
        id: "!d:hs",
        direct: true,
    };

    fn text(sender: &str, body: &str, extra: Value) -> Value {
        let mut content = json!({ "msgtype": "m.text", "body": body });
        if let Value::Object(m) = extra {
            for (k, v) in m {
                content[k] = v;
            }
        }
        json!({ "type": "m.room.message", "event_id": "$e1", "sender": sender, "content": content })
    }

    #[test]
    fn group_message_by_display_name_starts_a_thread_under_itself() {
        let s = State::default();
        let m = convert(
            &text("@ann:hs", "Switchboard: deploy status?", json!({})),
            &GROUP,
            &BOT,
            &s,
        )
        .unwrap();
        assert!(m.mentioned && !m.direct);
        assert_eq!(m.text, "deploy status?");
        assert_eq!(m.address.thread.as_deref(), Some("$e1"));
        assert_eq!(m.sender.as_str(), "@ann:hs");
    }

    #[test]
    fn the_display_name_counts_only_when_it_addresses_the_bot() {
        let s = State::default();
        let named = |body: &str| convert(&text("@ann:hs", body, json!({})), &GROUP, &BOT, &s).unwrap();
        assert!(named("switchboard, status?").mentioned);
        assert_eq!(named("switchboard, status?").text, "status?");
        assert!(!named("the switchboard is down").mentioned);
        assert!(named("ping @bot:hs please").mentioned);
        assert_eq!(named("ping @bot:hs please").text, "ping please");
    }

    #[test]
    fn unmentioned_group_message_is_not_a_mention_and_dm_has_no_thread() {
        let s = State::default();
        let g = convert(&text("@ann:hs", "lunch?", json!({})), &GROUP, &BOT, &s).unwrap();
        assert!(!g.mentioned);
        let d = convert(&text("@ann:hs", "lunch?", json!({})), &DM, &BOT, &s).unwrap();
        assert!(d.direct && d.address.thread.is_none());
    }

    #[test]
    fn m_mentions_replies_to_the_bot_and_bot_threads_count_as_mentions() {
        let s = State::default();
        let explicit = text("@ann:hs", "hey", json!({ "m.mentions": { "user_ids": ["@bot:hs"] } }));
        assert!(convert(&explicit, &GROUP, &BOT, &s).unwrap().mentioned);
        s.remember_sent("$bot1", Some("$root"));
        let reply = text(
            "@ann:hs",
            "and then?",
            json!({ "m.relates_to": { "m.in_reply_to": { "event_id": "$bot1" } } }),
        );
        let r = convert(&reply, &GROUP, &BOT, &s).unwrap();
        assert!(r.mentioned);
        assert_eq!(r.reply_to.as_deref(), Some("$bot1"));
        let in_thread = text(
            "@ann:hs",
            "more",
            json!({ "m.relates_to": { "rel_type": "m.thread", "event_id": "$root", "is_falling_back": true, "m.in_reply_to": { "event_id": "$x" } } }),
        );
        let t = convert(&in_thread, &GROUP, &BOT, &s).unwrap();
        assert!(t.mentioned);
        assert_eq!(t.address.thread.as_deref(), Some("$root"));
        assert_eq!(t.reply_to, None);
        let other_thread = in_thread.to_string().replace("$root", "$other");
        let o = convert(&serde_json::from_str(&other_thread).unwrap(), &GROUP, &BOT, &s).unwrap();
        assert!(!o.mentioned);
    }

    #[test]
    fn own_messages_edits_and_notices_are_ignored() {
        let s = State::default();
        assert!(convert(&text("@bot:hs", "Switchboard", json!({})), &DM, &BOT, &s).is_none());
        let edit = text(
            "@ann:hs",
            "* fixed",
            json!({ "m.new_content": { "body": "fixed" }, "m.relates_to": { "rel_type": "m.replace", "event_id": "$e0" } }),
        );
        assert!(convert(&edit, &DM, &BOT, &s).is_none());
        let notice = text("@ann:hs", "fyi", json!({ "msgtype": "m.notice" }));
        assert!(convert(&notice, &DM, &BOT, &s).is_none());
    }

    #[test]
    fn reply_fallback_is_stripped() {
        let s = State::default();
        let m = convert(
            &text("@ann:hs", "> <@bot:hs> earlier\n> text\n\nreal question", json!({})),
            &DM,
            &BOT,
            &s,
        )
        .unwrap();
        assert_eq!(m.text, "real question");
    }

    #[test]
    fn reactions_on_open_prompts_become_decisions() {
        let s = State::default();
        s.prompts.lock().insert("$prompt".into(), "ab12".into());
        let react = |key: &str, target: &str| {
            json!({ "type": "m.reaction", "event_id": "$r", "sender": "@op:hs",
                    "content": { "m.relates_to": { "rel_type": "m.annotation", "event_id": target, "key": key } } })
        };
        let decision = |c| Action::Decide {
            approval: "ab12".into(),
            choice: c,
        };
        let once = convert(&react("✅", "$prompt"), &GROUP, &BOT, &s).unwrap();
        assert_eq!(once.action, decision(ApprovalChoice::AllowOnce));
        assert_eq!(once.message_id.as_deref(), Some("$prompt"));
        assert_eq!(
            once.event_id.as_deref(),
            Some("$r"),
            "each reaction is an event of its own"
        );
        assert!(once.mentioned && once.address.thread.is_none());
        for (key, choice) in [
            ("♾", ApprovalChoice::Always),
            ("♾️", ApprovalChoice::Always),
            ("❌", ApprovalChoice::Deny),
        ] {
            let m = convert(&react(key, "$prompt"), &GROUP, &BOT, &s).unwrap();
            assert_eq!(m.action, decision(choice));
        }
        assert!(convert(&react("👍", "$prompt"), &GROUP, &BOT, &s).is_none());
        assert!(convert(&react("✅", "$elsewhere"), &GROUP, &BOT, &s).is_none());
    }
}

/// Whatever a room carries (any Unicode body, any display name, odd
/// relations, values of the wrong JSON type), converting an event never
/// panics: the sync token only moves past an event once it was handed on.
#[cfg(test)]
mod never_panics {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn unicode() -> impl Strategy<Value = String> {
        let pieces = prop::sample::select(vec![
            "İ",
            "ẞ",
            "@bot:hs",
            "Switchboard",
            "SWİTCHBOARD",
            ":",
            ",",
            "> ",
            "\n\n",
            "\u{301}",
            "👍🏽",
        ]);
        prop::collection::vec(
            prop_oneof![any::<char>().prop_map(String::from), pieces.prop_map(String::from)],
            0..30,
        )
        .prop_map(|p| p.concat())
    }

    fn json_value() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            unicode().prop_map(Value::from),
            Just(json!(["$root"])),
            Just(json!({"event_id": "$root"})),
        ]
    }

    proptest! {
        #[test]
        fn any_message_event(
            body in unicode(),
            name in unicode(),
            kind in prop::sample::select(vec!["m.room.message", "m.reaction"]),
            rel_type in json_value(),
            event_id in json_value(),
            reply in json_value(),
            key in json_value(),
            mentions in json_value(),
            direct in any::<bool>(),
        ) {
            let state = State::default();
            state.prompts.lock().insert("$root".into(), "ab12".into());
            state.remember_sent("$root", Some("$root"));
            let bot = Bot { channel: "matrix.main", user_id: "@bot:hs", display_name: Some(&name) };
            let room = Room { id: "!r:hs", direct };
            let ev = json!({
                "type": kind, "event_id": "$e", "sender": "@ann:hs",
                "content": {
                    "msgtype": "m.text", "body": body,
                    "m.mentions": {"user_ids": mentions},
                    "m.relates_to": {"rel_type": rel_type, "event_id": event_id, "key": key,
                                     "m.in_reply_to": {"event_id": reply}},
                },
            });
            let m = convert(&ev, &room, &bot, &state);
            if kind == "m.room.message" && rel_type != "m.replace" {
                prop_assert!(m.is_some());
            }
        }
    }
}
