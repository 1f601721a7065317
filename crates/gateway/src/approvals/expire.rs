//! At start: prompts of requests an earlier process left pending are edited
//! to say they expired (the rows were marked `expired` by bootstrap).

use crate::channels::ChannelSet;
use switchboard_core::{ApprovalPrompt, MessageRef, PromptState};
use switchboard_store::ApprovalRow;

pub async fn update_expired_prompts(channels: &ChannelSet, rows: &[ApprovalRow]) {
    for row in rows {
        let (Some(channel), Some(chat), Some(message)) = (&row.channel, &row.chat, &row.prompt_message) else {
            continue;
        };
        let Some(ch) = channels.get(channel) else { continue };
        let prompt = ApprovalPrompt {
            id: row.id.clone(),
            agent: row.agent.clone(),
            caller_chain: row
                .caller_chain
                .split(" > ")
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
            tool: row.tool.clone(),
            summary: row.summary.clone(),
            risk: row.risk.clone(),
            deadline_unix: row.deadline_at / 1000,
        };
        let at = MessageRef {
            chat: chat.clone(),
            id: message.clone(),
        };
        if let Err(e) = ch.update_approval_prompt(&at, &prompt, &PromptState::Expired).await {
            tracing::warn!(approval = %row.id, error = %e, "cannot mark an expired prompt");
        }
    }
}
