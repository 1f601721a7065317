//! What people send, as Switchboard's `Inbound`: messages (with the bot's
//! mention cut out), button presses (`Action::Decide`) and application
//! commands (`Action::Command`). Pure functions of the payload and of
//! where the message sits, so one odd message can only be skipped.

use crate::commands;
use serenity::model::application::{CommandInteraction, ComponentInteraction};
use serenity::model::channel::{Message, MessageType};
use switchboard_core::{Action, ApprovalChoice, Attachment, AttachmentKind, ChatAddress, Inbound, UserId};

/// What kind of Discord channel a message sits in, as the receiver
/// resolved it (not `config::Place`, which routes match).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Venue {
    /// A direct message channel.
    Dm,
    /// A guild channel where each conversation is a thread under the
    /// message that starts it.
    Channel,
    /// A thread (or forum post) under `parent`; `bot_thread` when the bot
    /// started it or answers in it (its messages need no mention).
    Thread { parent: u64, bot_thread: bool },
}

/// Interaction replies carry `ix:<e|p>:<interaction id>` as their message
/// id: `e` when the answer is ephemeral (only the presser sees it). The
/// interaction's token stays in the adapter's memory (see `state`): it is
/// a credential, and message ids are stored and logged.
pub(crate) const INTERACTION_PREFIX: &str = "ix:";

/// The text of a message with every mention of the bot cut out, and
/// whether there was one.
pub(crate) fn without_mention(content: &str, bot: u64) -> (String, bool) {
    let (plain, nick) = (format!("<@{bot}>"), format!("<@!{bot}>"));
    let found = content.contains(&plain) || content.contains(&nick);
    let text = content.replace(&nick, " ").replace(&plain, " ");
    (text.split_whitespace().collect::<Vec<_>>().join(" "), found)
}

/// A person's message, or `None` for what the bot does not answer: bots
/// (itself included), webhooks, system messages, messages without text.
pub(crate) fn message(channel: &str, m: &Message, bot: u64, place: &Venue) -> Option<Inbound> {
    if m.author.bot || m.webhook_id.is_some() || !matches!(m.kind, MessageType::Regular | MessageType::InlineReply) {
        return None;
    }
    let (text, named) = without_mention(&m.content, bot);
    let attachments: Vec<Attachment> = m.attachments.iter().map(attachment).collect();
    if text.is_empty() && attachments.is_empty() {
        return None;
    }
    let listed = m.mentions.iter().any(|u| u.id.get() == bot);
    let replied_to_bot = m.referenced_message.as_ref().is_some_and(|r| r.author.id.get() == bot);
    let channel_id = m.channel_id.get();
    let (address, bot_thread) = match place {
        Venue::Dm => (ChatAddress::new(channel, channel_id.to_string()), false),
        Venue::Channel => (
            ChatAddress::new(channel, channel_id.to_string()).with_thread(Some(m.id.get().to_string())),
            false,
        ),
        Venue::Thread { parent, bot_thread } => (
            ChatAddress::new(channel, parent.to_string()).with_thread(Some(channel_id.to_string())),
            *bot_thread,
        ),
    };
    Some(Inbound {
        address,
        sender: UserId(format!("discord:{}", m.author.id.get())),
        sender_name: m.author.global_name.clone().unwrap_or_else(|| m.author.name.clone()),
        text,
        message_id: Some(m.id.get().to_string()),
        event_id: None,
        mentioned: named || listed || replied_to_bot || bot_thread,
        direct: *place == Venue::Dm,
        reply_to: m
            .message_reference
            .as_ref()
            .and_then(|r| r.message_id)
            .map(|id| id.get().to_string()),
        guild: None,
        attachments,
        action: Action::Text,
    })
}

/// A file on a message, found again by its CDN address.
fn attachment(a: &serenity::model::channel::Attachment) -> Attachment {
    let mime = a.content_type.clone();
    let kind = AttachmentKind::of_mime(mime.as_deref());
    Attachment {
        kind,
        name: a.filename.clone(),
        mime,
        size: Some(u64::from(a.size)),
        source: a.url.clone(),
        duration_secs: a.duration_secs.map(|d| d.max(0.0).ceil() as u64),
    }
}

/// The request and choice of a button press on an approval prompt.
pub(crate) fn press_choice(custom_id: &str) -> Option<(String, ApprovalChoice)> {
    ApprovalChoice::from_button_data(custom_id)
}

/// An interaction as an inbound message: who (as Discord authenticated
/// them), where, and what they did. Its message id carries what its
/// answer needs (see [`INTERACTION_PREFIX`]).
fn interaction(
    address: ChatAddress,
    user: &serenity::model::user::User,
    reply_via: String,
    action: Action,
    direct: bool,
) -> Inbound {
    Inbound {
        sender_name: user.global_name.clone().unwrap_or_else(|| user.name.clone()),
        message_id: Some(reply_via),
        mentioned: true,
        direct,
        action,
        ..Inbound::new(address, UserId(format!("discord:{}", user.id.get())), "")
    }
}

/// `ix:<e|p>:<id>`.
fn reply_via(id: u64, ephemeral: bool) -> String {
    let how = if ephemeral { 'e' } else { 'p' };
    format!("{INTERACTION_PREFIX}{how}:{id}")
}

/// Where an interaction was used, for its answer's conversation.
pub(crate) fn interaction_address(channel: &str, channel_id: u64, place: &Venue) -> ChatAddress {
    match place {
        Venue::Thread { parent, .. } => {
            ChatAddress::new(channel, parent.to_string()).with_thread(Some(channel_id.to_string()))
        }
        Venue::Dm | Venue::Channel => ChatAddress::new(channel, channel_id.to_string()),
    }
}

/// A button press on an approval prompt; `None` for other buttons.
pub(crate) fn press(channel: &str, i: &ComponentInteraction, place: &Venue) -> Option<Inbound> {
    let (approval, choice) = press_choice(&i.data.custom_id)?;
    let address = interaction_address(channel, i.channel_id.get(), place);
    let via = reply_via(i.id.get(), true);
    let action = Action::Decide { approval, choice };
    Some(interaction(address, &i.user, via, action, i.guild_id.is_none()))
}

/// An application command; `None` for commands the bot did not register.
pub(crate) fn command(channel: &str, i: &CommandInteraction, place: &Venue) -> Option<Inbound> {
    let (name, args) = commands::invocation(&i.data)?;
    let address = interaction_address(channel, i.channel_id.get(), place);
    let via = reply_via(i.id.get(), commands::is_ephemeral(&i.data.name));
    Some(interaction(
        address,
        &i.user,
        via,
        Action::Command { name, args },
        i.guild_id.is_none(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_are_cut_in_both_forms() {
        assert_eq!(without_mention("<@42> hi there", 42), ("hi there".into(), true));
        assert_eq!(without_mention("hey <@!42>, look", 42), ("hey , look".into(), true));
        assert_eq!(without_mention("<@421> hi", 42), ("<@421> hi".into(), false));
        assert_eq!(without_mention("<@42>", 42), (String::new(), true));
    }

    #[test]
    fn only_approval_buttons_become_decisions() {
        let ab12 = |c| Some(("ab12".to_string(), c));
        assert_eq!(press_choice("sb:ab12:once"), ab12(ApprovalChoice::AllowOnce));
        assert_eq!(press_choice("sb:ab12:always"), ab12(ApprovalChoice::Always));
        assert_eq!(press_choice("sb:ab12:deny"), ab12(ApprovalChoice::Deny));
        assert_eq!(press_choice("sb:ab12:maybe"), None, "an unknown choice is nothing");
        assert_eq!(press_choice("sb:ab 12:once"), None);
        assert_eq!(press_choice("other:ab12:once"), None);
        assert_eq!(press_choice("sb::once"), None);
    }
}

#[cfg(test)]
mod never_panics {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    const BOT: u64 = 42;

    fn person(id: u64) -> serde_json::Value {
        json!({"id": id.to_string(), "username": "p", "discriminator": "0", "global_name": null, "avatar": null, "bot": false})
    }

    fn message_of(content: &str, mentions_bot: bool, reply_to_bot: bool) -> Message {
        let mut m = json!({
            "id": "100", "channel_id": "200", "author": person(7), "content": content,
            "timestamp": "2026-12-01T10:00:00.000000+00:00", "edited_timestamp": null, "tts": false,
            "mention_everyone": false, "mentions": if mentions_bot { vec![person(BOT)] } else { vec![] },
            "mention_roles": [], "attachments": [], "embeds": [], "pinned": false, "type": 0
        });
        if reply_to_bot {
            let mut parent = m.clone();
            parent["author"] = person(BOT);
            m["referenced_message"] = parent;
            m["message_reference"] = json!({"message_id": "99", "channel_id": "200"});
            m["type"] = json!(19);
        }
        serde_json::from_value(m).unwrap()
    }

    proptest! {
        #[test]
        fn any_message_text(content in ".{0,300}", mentions in any::<bool>(), reply in any::<bool>(), at in 0usize..3) {
            let places = [Venue::Dm, Venue::Channel, Venue::Thread { parent: 1, bot_thread: false }];
            let with_mention = format!("{content} <@{BOT}>{content}<@!{BOT}");
            for text in [content.as_str(), with_mention.as_str()] {
                let m = message_of(text, mentions, reply);
                if let Some(i) = message("discord.main", &m, BOT, &places[at]) {
                    let cut = format!("<@{BOT}>");
                    prop_assert!(!i.text.contains(&cut));
                    prop_assert!(i.mentioned || !(mentions || reply));
                }
            }
        }

        #[test]
        fn any_button_data(data in ".{0,120}") {
            if let Some((id, choice)) = press_choice(&data) {
                prop_assert_eq!(choice.button_data(&id), data);
            }
        }
    }
}
