//! Telegram updates as `Inbound` messages.

use crate::CALLBACK_PREFIX;
use switchboard_core::{Action, ApprovalChoice, ChatAddress, Inbound, UserId};
use teloxide::types::{Update, UpdateKind};

/// The bot an update was received by: its channel's name (`telegram.main`)
/// and its username (for mentions).
pub(crate) struct Bot<'a> {
    pub name: &'a str,
    pub username: &'a str,
}

/// One update as a message for the router, or `None` when it is not one.
/// A panic here would stop the poller, so the caller runs this guarded.
pub(crate) fn convert(channel: &Bot<'_>, update: &Update) -> Option<Inbound> {
    let username = channel.username;
    match &update.kind {
        UpdateKind::Message(m) => {
            let attachments = crate::files::attachments(m);
            let text = match m.text().or_else(|| m.caption()) {
                Some(t) => t.to_string(),
                None if !attachments.is_empty() => String::new(),
                None => return None,
            };
            let from = m.from.as_ref()?;
            let mention = format!("@{username}");
            let replied_to_bot = m
                .reply_to_message()
                .and_then(|r| r.from.as_ref())
                .is_some_and(|u| u.username.as_deref().is_some_and(|n| n.eq_ignore_ascii_case(username)));
            let found = if username.is_empty() {
                None
            } else {
                find_mention(&text, &mention)
            };
            let mentioned = found.is_some() || replied_to_bot;
            let clean = match found {
                Some(at) => format!("{}{}", &text[..at], &text[at + mention.len()..])
                    .trim()
                    .to_string(),
                None => text.clone(),
            };
            Some(Inbound {
                address: address_of(channel.name, m),
                sender: UserId(format!("tg:{}", from.id.0)),
                sender_name: from.full_name(),
                text: clean,
                message_id: Some(m.id.0.to_string()),
                event_id: None,
                mentioned,
                direct: m.chat.is_private(),
                reply_to: m.reply_to_message().map(|r| r.id.0.to_string()),
                guild: None,
                attachments,
                action: Action::Text,
            })
        }
        UpdateKind::CallbackQuery(q) => {
            // The gateway's answer to this press (the decision, or the
            // refusal) comes back as a reply to `cbq:<id>` and is shown as
            // the callback answer.
            let (approval, choice) = ApprovalChoice::from_button_data(q.data.as_deref()?)?;
            let m = q.message.as_ref()?.regular_message()?;
            Some(Inbound {
                sender_name: q.from.full_name(),
                message_id: Some(format!("{CALLBACK_PREFIX}{}", q.id.0)),
                mentioned: true,
                direct: m.chat.is_private(),
                action: Action::Decide { approval, choice },
                ..Inbound::new(address_of(channel.name, m), UserId(format!("tg:{}", q.from.id.0)), "")
            })
        }
        _ => None,
    }
}

/// Where `mention` (`@botname`, ASCII as Telegram usernames are) starts in
/// `text`, matched without regard to ASCII case and not followed by more
/// username characters (`@bot` is not in `@bot2`). The offset is a char
/// boundary of `text` itself: nothing is measured on a transformed copy,
/// whose byte lengths may differ (`"İ".to_lowercase()` is longer).
/// `@bot what's up` → `what's up` and `/status@bot` → `/status` cut there.
pub(crate) fn find_mention(text: &str, mention: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let want = mention.as_bytes();
    text.char_indices().map(|(i, _)| i).find(|&i| {
        let end = i + want.len();
        end <= bytes.len()
            && bytes[i..end].eq_ignore_ascii_case(want)
            && !bytes.get(end).is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
    })
}

/// Where a message sits: its chat, and its forum topic when it was written
/// in one (topic 1, "General", is the chat itself).
fn address_of(channel: &str, m: &teloxide::types::Message) -> ChatAddress {
    let thread = m
        .thread_id
        .filter(|_| m.is_topic_message)
        .map(|t| t.0.0)
        .filter(|t| *t != 1)
        .map(|t| t.to_string());
    ChatAddress::new(channel.to_string(), m.chat.id.0.to_string()).with_thread(thread)
}

#[cfg(test)]
mod tests {
    use super::find_mention;

    fn strip(text: &str) -> Option<String> {
        let at = find_mention(text, "@Sb_bot")?;
        Some(format!("{}{}", &text[..at], &text[at + 7..]).trim().to_string())
    }

    #[test]
    fn mentions_are_found_in_the_original_text() {
        assert_eq!(strip("İİİİ @sb_bot hi").as_deref(), Some("İİİİ  hi"));
        assert_eq!(strip("@SB_BOT what's up").as_deref(), Some("what's up"));
        assert_eq!(strip("/status@sb_bot").as_deref(), Some("/status"));
        assert_eq!(strip("ask @sb_bot2 instead"), None);
        assert_eq!(strip("no mention here"), None);
        assert_eq!(strip("ẞ@sb_bot"), Some("ẞ".into()));
    }
}

/// Whatever people type (any Unicode, any entity offsets, any username
/// casing), converting an update never panics: a panic here used to stop
/// the poller on that update forever.
#[cfg(test)]
mod never_panics {
    use super::{Bot, convert};
    use proptest::prelude::*;
    use serde_json::json;
    use switchboard_core::ApprovalChoice;

    fn text_strategy() -> impl Strategy<Value = String> {
        // Arbitrary Unicode, plus pieces known to change length when
        // lowercased or to sit next to a mention.
        let pieces = prop::sample::select(vec![
            "İ",
            "ẞ",
            "Ⱥ",
            "@sb_bot",
            "@SB_BOT",
            "@sb_bot2",
            "/status@sb_bot",
            " ",
            "\u{301}",
            "👍🏽",
            "\n",
        ]);
        (prop::collection::vec(
            prop_oneof![any::<char>().prop_map(String::from), pieces.prop_map(String::from)],
            0..40,
        ),)
            .prop_map(|(parts,)| parts.concat())
    }

    proptest! {
        #[test]
        fn any_message_text_and_entities(
            text in text_strategy(),
            offset in 0i64..80,
            length in 0i64..80,
            private in any::<bool>(),
            username in prop::sample::select(vec!["sb_bot", "SB_Bot", "", "İbot"]),
        ) {
            let chat = if private {
                json!({"id": 5, "type": "private", "first_name": "Ann"})
            } else {
                json!({"id": -100, "type": "supergroup", "title": "t", "is_forum": true})
            };
            let update = json!({"update_id": 1, "message": {
                "message_id": 3, "date": 0, "chat": chat,
                "from": {"id": 5, "is_bot": false, "first_name": "Ann"},
                "text": text,
                "entities": [{"type": "mention", "offset": offset, "length": length}],
                "message_thread_id": 7, "is_topic_message": true,
            }});
            let update = serde_json::from_str(&update.to_string()).expect("a well-formed update");
            let m = convert(&Bot { name: "telegram.main", username }, &update);
            // Telegram never sends an empty text; every other one is a message.
            prop_assert!(m.is_some() || text.is_empty());
        }

        #[test]
        fn any_button_data(data in any::<String>()) {
            let update = json!({"update_id": 2, "callback_query": {
                "id": "q1", "from": {"id": 5, "is_bot": false, "first_name": "Ann"}, "chat_instance": "c",
                "data": data,
                "message": {"message_id": 3, "date": 0, "chat": {"id": 5, "type": "private", "first_name": "Ann"},
                            "from": {"id": 9, "is_bot": true, "first_name": "Bot"}, "text": "prompt"},
            }});
            let update = serde_json::from_str(&update.to_string()).expect("a well-formed update");
            let m = convert(&Bot { name: "telegram.main", username: "sb_bot" }, &update);
            prop_assert_eq!(m.is_some(), ApprovalChoice::from_button_data(&data).is_some());
        }
    }
}
