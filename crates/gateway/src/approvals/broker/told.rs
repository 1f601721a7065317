//! What the broker tells people, and how choices map to stored statuses.

use super::{Decision, Via};
use switchboard_config::Config;
use switchboard_core::{ApprovalChoice, UserId};
use switchboard_store::{ApprovalRow, ApprovalStatus};

/// Why `user` may not decide `asked` (`approval <id> was asked`) any more,
/// if a reload took them off the approvers of `profile`: who was asked is
/// stored with the request, who decides is the configuration's now.
pub(crate) fn removed_approver(config: &Config, user: &UserId, profile: Option<&str>, asked: &str) -> Option<String> {
    if crate::rights::still_approver(config, user, profile) {
        return None;
    }
    tracing::warn!(%user, asked, "a decision by someone no route names any more was refused");
    Some(format!(
        "{user} is no longer an approver (the configuration changed after {asked}): only the current approvers can decide it. The request stays open."
    ))
}

/// Why `user` may not decide request `id` (an `approval` or a `pairing`,
/// says `what`) from `from`, if they may not. An approver is recognised
/// only on the platform that vouches for their id: `tg:7` typed into a
/// local chat is not tg:7.
pub(crate) fn refusal(what: &str, id: &str, user: &UserId, from: Via<'_>, approvers: &[String]) -> Option<String> {
    if let Via::Chat(from) = from
        && !user.belongs_to(&from.channel)
    {
        return Some(format!(
            "{user} cannot decide {what} {id} from {}: decisions count only from the platform that id belongs to. The request stays open.",
            from.channel
        ));
    }
    if !crate::rights::may_decide(user, approvers) {
        return Some(format!(
            "{user} may not decide {what} {id}: only its approvers can. The request stays open."
        ));
    }
    None
}

/// What the person who decided is told.
pub(super) fn decided(id: &str, choice: ApprovalChoice) -> String {
    match choice {
        ApprovalChoice::AllowOnce => format!("Approval {id}: allowed once."),
        ApprovalChoice::Always => format!("Approval {id}: allowed for the rest of this run."),
        ApprovalChoice::Deny => format!("Approval {id}: denied."),
    }
}

/// The decision a decided row records; `None` for one that ended
/// otherwise (expired, cancelled, unavailable).
pub(super) fn decision_of(row: ApprovalRow) -> Option<Decision> {
    let choice = match row.status {
        ApprovalStatus::Approved => ApprovalChoice::AllowOnce,
        ApprovalStatus::ApprovedAlways => ApprovalChoice::Always,
        ApprovalStatus::Denied => ApprovalChoice::Deny,
        _ => return None,
    };
    Some(Decision {
        choice,
        by: row.decided_by.unwrap_or_default(),
        reason: row.reason,
    })
}

/// What a person is told about a request that ended before their answer.
pub(super) fn no_longer_pending(row: &ApprovalRow) -> String {
    match &row.decided_by {
        Some(by) if !by.is_empty() => format!(
            "Approval {} is no longer pending: it was {} by {by}.",
            row.id, row.status
        ),
        _ => format!("Approval {} is no longer pending: it was {}.", row.id, row.status),
    }
}

/// The stored status of a choice.
pub(super) fn status_of(choice: ApprovalChoice) -> ApprovalStatus {
    match choice {
        ApprovalChoice::AllowOnce => ApprovalStatus::Approved,
        ApprovalChoice::Always => ApprovalStatus::ApprovedAlways,
        ApprovalChoice::Deny => ApprovalStatus::Denied,
    }
}
