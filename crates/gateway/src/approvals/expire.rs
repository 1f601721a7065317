//! At start: prompts of requests an earlier process left pending are edited
//! to say they expired (the rows were marked `expired` by bootstrap).

use crate::channels::ChannelSet;
use switchboard_core::{ChatAddress, MessageRef, Outbound, PromptEdit, PromptState};
use switchboard_store::ApprovalRow;

pub(crate) async fn update_expired_prompts(channels: &ChannelSet, rows: &[ApprovalRow]) {
    for row in rows {
        tracing::info!(approval = %row.id, channel = ?row.channel, chat = ?row.chat, prompt = ?row.prompt_message, "marking an expired approval prompt");
        let (Some(channel), Some(chat)) = (&row.channel, &row.chat) else {
            continue;
        };
        let Some(ch) = channels.get(channel) else { continue };
        let Some(message) = &row.prompt_message else {
            // The process died between posting the prompt and recording
            // where: say so in the chat instead of editing.
            let address = ChatAddress::new(channel.clone(), chat.clone()).with_thread(row.thread.clone());
            let text = format!(
                "Approval {} ({} for agent {}) expired: the gateway restarted before a decision.",
                row.id, row.tool, row.agent
            );
            if let Err(e) = ch.send(&Outbound::new(address, text)).await {
                tracing::warn!(approval = %row.id, error = %e, "cannot announce an expired request");
            }
            continue;
        };
        let prompt = super::prompt_of_row(row);
        let at = MessageRef {
            chat: chat.clone(),
            id: message.clone(),
        };
        let edit = PromptEdit {
            message: &at,
            prompt: &prompt,
            state: &PromptState::Expired,
        };
        if let Err(e) = ch.update_approval_prompt(&edit).await {
            tracing::warn!(approval = %row.id, error = %e, "cannot mark an expired prompt");
        }
    }
}
