//! Status reactions on Matrix: an `m.annotation` on the person's message,
//! and the bot's previous one redacted. The previous reaction's event id is
//! kept until a final status replaces it.

use super::{Inner, content, errors};
use matrix_sdk::ruma::EventId;
use switchboard_core::{ChannelError, StatusMark};

/// Reactions kept at most (messages whose turn never ended are forgotten
/// past this).
const KEPT: usize = 10_000;

impl Inner {
    pub(crate) async fn set_status(&self, mark: &StatusMark<'_>) -> Result<(), ChannelError> {
        let room = self.room(&mark.address.chat)?;
        let reaction = content::reaction(mark.message_id, mark.status.emoji());
        let sent = self.send_content(&room, "m.reaction", reaction).await?;
        let previous = {
            let mut kept = self.state.status_reactions.lock();
            if kept.len() >= KEPT {
                kept.clear();
            }
            if mark.status.is_final() {
                kept.remove(mark.message_id)
            } else {
                kept.insert(mark.message_id.to_string(), sent)
            }
        };
        if let Some(old) = previous {
            let id = EventId::parse(&old).map_err(|e| ChannelError::Permanent(format!("event id {old}: {e}")))?;
            room.redact(&id, None, None).await.map_err(|e| errors::map_http(&e))?;
        }
        Ok(())
    }
}
