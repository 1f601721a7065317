//! Who may do what in the console: the same rules as in chat. Deciding a
//! request needs a place in its `approvers`; killing a run needs to have
//! asked for it or to be an operator (an approver) of its agent, as for
//! `/subagents kill`; pausing spawning needs an operator, as for
//! `/subagents pause`.

use switchboard_config::Config;
use switchboard_core::UserId;
use switchboard_store::{ApprovalRow, RunRow};

/// The people who may decide request `a`.
pub(crate) fn approvers_of(a: &ApprovalRow) -> Vec<String> {
    a.approvers
        .as_deref()
        .and_then(|j| serde_json::from_str(j).ok())
        .unwrap_or_default()
}

pub(crate) use crate::commands::operates;

/// Whether `user` may kill run `r` (and its children).
pub(crate) fn may_kill(config: &Config, user: &UserId, r: &RunRow) -> bool {
    if r.requester.as_deref() == Some(user.as_str()) {
        return true;
    }
    let chain: Vec<String> = serde_json::from_str(&r.owner_chain).unwrap_or_default();
    let root = chain.first().map_or(r.agent.as_str(), String::as_str);
    operates(config, user, root)
}

/// Whether `user` may pause or resume spawning for everyone: an operator
/// of every enabled agent.
pub(crate) fn may_pause(config: &Config, user: &UserId) -> bool {
    config.enabled_agents().iter().all(|a| operates(config, user, a))
}
