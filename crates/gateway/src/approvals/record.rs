//! What every broker does with a request before asking: store it for the
//! audit trail and build the prompt people see.

use switchboard_core::{ApprovalPrompt, ChatAddress, PromptEdit, PromptKind};
use switchboard_runtime::ApprovalRequest;
use switchboard_store::{ApprovalRow, NewApproval, Store, StoreError};

/// Store `req` as pending, asked in `at` of `approvers`, due at
/// `deadline_ms`, needing `required` different people's allows.
pub(crate) async fn store_request(
    store: &Store,
    req: &ApprovalRequest,
    at: &ChatAddress,
    approvers: &[String],
    (deadline_ms, required): (i64, u32),
) -> Result<(), StoreError> {
    store
        .approvals()
        .insert(&NewApproval {
            id: &req.id,
            run_id: req.run_id.as_deref(),
            requested_by: req.requested_by.as_deref(),
            agent: &req.agent,
            caller_chain: &req.caller_chain,
            tool: &req.tool,
            summary: &req.summary,
            risk: req.risk,
            channel: Some(&at.channel),
            chat: Some(&at.chat),
            thread: at.thread.as_deref(),
            deadline_at: deadline_ms,
            approvers,
            approvals_required: i64::from(required),
        })
        .await
}

/// The prompt for `req`, needing `required` people's allows.
pub(crate) fn prompt_of(req: &ApprovalRequest, deadline_ms: i64, required: u32) -> ApprovalPrompt {
    ApprovalPrompt {
        id: req.id.clone(),
        agent: req.agent.clone(),
        caller_chain: req.caller_chain.clone(),
        tool: req.tool.clone(),
        summary: req.summary.clone(),
        risk: req.risk,
        deadline_unix: deadline_ms / 1000,
        kind: PromptKind::Tool,
        approvals_required: required,
    }
}

/// The prompt a stored request was asked with.
pub(crate) fn prompt_of_row(row: &ApprovalRow) -> ApprovalPrompt {
    ApprovalPrompt {
        id: row.id.clone(),
        agent: row.agent.clone(),
        caller_chain: row.caller_chain.clone(),
        tool: row.tool.clone(),
        summary: row.summary.clone(),
        risk: row.risk,
        deadline_unix: row.deadline_at / 1000,
        kind: PromptKind::Tool,
        approvals_required: u32::try_from(row.approvals_required).unwrap_or(1),
    }
}

/// Edit a posted prompt (through `channel`, where this gateway runs it) to
/// show `edit`'s state; a failure is logged, never fatal.
pub(crate) async fn edit_prompt(channels: &crate::channels::ChannelSet, channel: &str, edit: &PromptEdit<'_>) {
    if let Some(ch) = channels.get(channel)
        && let Err(e) = ch.update_approval_prompt(edit).await
    {
        tracing::warn!(request = %edit.prompt.id, %channel, error = %e, "cannot edit a posted prompt");
    }
}
