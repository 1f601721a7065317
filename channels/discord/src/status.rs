//! Status reactions on Discord: the bot adds the new reaction to the
//! person's message and removes its previous one. A message in a guild
//! channel is addressed by the thread its answer will open (named by the
//! message's own id), so it is found in the channel; one in a thread or
//! forum post is in that thread; a direct message is in the DM channel.

use serenity::all::{ChannelId, MessageId, ReactionType};
use serenity::http::Http;
use switchboard_core::{ChannelError, StatusMark};

pub(crate) async fn set(http: &Http, mark: &StatusMark<'_>) -> Result<(), ChannelError> {
    let address = mark.address;
    let holder = match address.thread.as_deref() {
        Some(t) if t != mark.message_id => t,
        _ => address.chat.as_str(),
    };
    let channel = ChannelId::new(super::snowflake(holder, "channel")?);
    let message = MessageId::new(super::snowflake(mark.message_id, "message")?);
    let new = ReactionType::Unicode(mark.status.emoji().to_string());
    super::rest::retrying(|| http.create_reaction(channel, message, &new))
        .await
        .map_err(|e| super::rest::map_err(&e))?;
    if let Some(previous) = mark.previous.filter(|p| *p != mark.status) {
        let old = ReactionType::Unicode(previous.emoji().to_string());
        super::rest::retrying(|| http.delete_reaction_me(channel, message, &old))
            .await
            .map_err(|e| super::rest::map_err(&e))?;
    }
    Ok(())
}
