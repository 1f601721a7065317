//! Telegram updates as `Inbound` messages.

use crate::{CALLBACK_PREFIX, Poller};
use switchboard_core::{ChatAddress, Inbound, UserId};
use teloxide::types::{Update, UpdateKind};

pub(crate) async fn convert(channel: &Poller, update: &Update) -> Option<Inbound> {
    let username = channel.username.as_str();
    match &update.kind {
        UpdateKind::Message(m) => {
            let text = m.text()?.to_string();
            let from = m.from.as_ref()?;
            let mention = format!("@{username}").to_lowercase();
            let replied_to_bot = m
                .reply_to_message()
                .and_then(|r| r.from.as_ref())
                .is_some_and(|u| u.username.as_deref().is_some_and(|n| n.eq_ignore_ascii_case(username)));
            let mentioned = !username.is_empty() && text.to_lowercase().contains(&mention) || replied_to_bot;
            let clean = if mentioned {
                strip_mention(&text, &mention)
            } else {
                text.clone()
            };
            let thread = m
                .thread_id
                .filter(|_| m.is_topic_message)
                .map(|t| t.0.0)
                .filter(|t| *t != 1)
                .map(|t| t.to_string());
            Some(Inbound {
                address: ChatAddress::new(channel.name.clone(), m.chat.id.0.to_string()).with_thread(thread),
                sender: UserId(format!("tg:{}", from.id.0)),
                sender_name: from.full_name(),
                text: clean,
                message_id: Some(m.id.0.to_string()),
                mentioned,
                direct: m.chat.is_private(),
                reply_to: m.reply_to_message().map(|r| r.id.0.to_string()),
            })
        }
        UpdateKind::CallbackQuery(q) => {
            // The gateway's answer to this press (the decision, or the
            // refusal) comes back as a reply to `cbq:<id>` and is shown as
            // the callback answer.
            let data = q.data.as_deref()?;
            let mut parts = data.splitn(3, ':');
            let (Some("sb"), Some(id), Some(choice)) = (parts.next(), parts.next(), parts.next()) else {
                return None;
            };
            let text = match choice {
                "once" => format!("/approve {id}"),
                "always" => format!("/approve {id} always"),
                _ => format!("/deny {id}"),
            };
            let m = q.message.as_ref()?.regular_message()?;
            let thread = m
                .thread_id
                .filter(|_| m.is_topic_message)
                .map(|t| t.0.0)
                .filter(|t| *t != 1)
                .map(|t| t.to_string());
            Some(Inbound {
                address: ChatAddress::new(channel.name.clone(), m.chat.id.0.to_string()).with_thread(thread),
                sender: UserId(format!("tg:{}", q.from.id.0)),
                sender_name: q.from.full_name(),
                text,
                message_id: Some(format!("{CALLBACK_PREFIX}{}", q.id.0)),
                mentioned: true,
                direct: m.chat.is_private(),
                reply_to: None,
            })
        }
        _ => None,
    }
}

/// `@bot what's up` → `what's up`; `/status@bot` → `/status`.
fn strip_mention(text: &str, mention: &str) -> String {
    let lower = text.to_lowercase();
    match lower.find(mention) {
        Some(i) => format!("{}{}", &text[..i], &text[i + mention.len()..])
            .trim()
            .to_string(),
        None => text.to_string(),
    }
}
