//! What every broker does with a request before asking: store it for the
//! audit trail and build the prompt people see.

use switchboard_core::{ApprovalPrompt, ChatAddress};
use switchboard_runtime::ApprovalRequest;
use switchboard_store::{NewApproval, Store, StoreError};

/// Store `req` as pending, asked in `at` of `approvers`, due at
/// `deadline_ms`.
pub(crate) async fn store_request(
    store: &Store,
    req: &ApprovalRequest,
    at: &ChatAddress,
    approvers: &[String],
    deadline_ms: i64,
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
            risk: &req.risk,
            channel: Some(&at.channel),
            chat: Some(&at.chat),
            thread: at.thread.as_deref(),
            deadline_at: deadline_ms,
            approvers,
        })
        .await
}

/// The prompt for `req`.
pub(crate) fn prompt_of(req: &ApprovalRequest, deadline_ms: i64) -> ApprovalPrompt {
    ApprovalPrompt {
        id: req.id.clone(),
        agent: req.agent.clone(),
        caller_chain: req.caller_chain.clone(),
        tool: req.tool.clone(),
        summary: req.summary.clone(),
        risk: req.risk.clone(),
        deadline_unix: deadline_ms / 1000,
    }
}
