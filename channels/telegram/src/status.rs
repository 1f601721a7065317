//! Status reactions on Telegram: `setMessageReaction` replaces the bot's
//! reaction on a person's message. Bots may only use Telegram's fixed set of
//! reaction emoji, so done and failed are 👍 and 😢 here.

use switchboard_core::{ChannelError, MessageStatus, StatusMark};
use teloxide::Bot;
use teloxide::payloads::SetMessageReactionSetters;
use teloxide::prelude::Requester;
use teloxide::types::{MessageId, ReactionType};

/// The reaction Telegram allows for `status`.
pub(crate) fn emoji(status: MessageStatus) -> &'static str {
    match status {
        MessageStatus::Done => "👍",
        MessageStatus::Failed => "😢",
        other => other.emoji(),
    }
}

pub(crate) async fn set(bot: &Bot, mark: &StatusMark<'_>) -> Result<(), ChannelError> {
    let id: i32 = mark
        .message_id
        .parse()
        .map_err(|_| ChannelError::Permanent(format!("not a Telegram message id: {}", mark.message_id)))?;
    bot.set_message_reaction(super::chat_id(&mark.address.chat)?, MessageId(id))
        .reaction([ReactionType::Emoji {
            emoji: emoji(mark.status).to_string(),
        }])
        .await
        .map(|_| ())
        .map_err(super::map_err)
}
