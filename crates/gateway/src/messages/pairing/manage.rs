//! What approvers type about people: `/pair CODE`, `/unpair <id>`,
//! `/people`.

use super::{Pairing, code};
use crate::approvals::{Ballot, Via};
use switchboard_core::{ApprovalChoice, UserId};
use switchboard_store::PairingStatus;

/// Rows `/people` lists at most.
const LISTED: i64 = 50;

impl Pairing {
    /// `/pair CODE`: let in the person whose waiting request has this code.
    pub(crate) async fn pair_by_code(&self, typed: &str, user: &UserId, from: Via<'_>) -> String {
        if !crate::rights::may_admit(&self.config.get(), user) {
            return format!("{user} may not let people in: only approvers can.");
        }
        let waiting = match self.store.pairings().waiting().await {
            Ok(rows) => rows,
            Err(e) => {
                tracing::error!(error = %e, "cannot read pairing requests");
                return "Pairing requests could not be read right now; try again.".into();
            }
        };
        // Every waiting code is compared (in constant time each), so how
        // long this takes says nothing about which code was near.
        let mut found = None;
        for row in waiting {
            if code::matches(typed, &row.code) && found.is_none() {
                found = Some(row);
            }
        }
        let Some(row) = found else {
            return format!(
                "No waiting request has the code {}. Codes are valid for one hour; the person can write again for a new one.",
                code::normalize(typed)
            );
        };
        let ballot = Ballot {
            user,
            from,
            choice: ApprovalChoice::AllowOnce,
            reason: None,
        };
        self.settle(row, ballot).await
    }

    /// `/unpair <id>`: the person may no longer talk to the bot (on any
    /// channel); a request of theirs still waiting is refused.
    pub(crate) async fn unpair(&self, target: &str, user: &UserId, from: Via<'_>) -> String {
        if !crate::rights::may_admit(&self.config.get(), user) {
            return format!("{user} may not send people away: only approvers can.");
        }
        match self
            .store
            .pairings()
            .revoke(target, user.as_str(), &from.to_string())
            .await
        {
            Ok(0) => format!("{target} is not paired on any channel."),
            Ok(_) => {
                tracing::info!(person = target, by = %user, "unpaired");
                format!("{target} may no longer talk to the bot (unless an allow list names them).")
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot revoke a pairing");
                "The pairing could not be revoked right now; try again.".into()
            }
        }
    }

    /// `/people`: who was let in, who waits, who was refused.
    pub(crate) async fn people(&self, user: &UserId, direct: bool) -> String {
        if !crate::rights::may_admit(&self.config.get(), user) {
            return format!("{user} may not list people: only approvers can.");
        }
        if !direct {
            return "Send /people to me in a direct message: the list names people.".into();
        }
        // Everyone paired now, whatever came after, then the latest others.
        let read = (
            self.store.pairings().paired_now(LISTED).await,
            self.store.pairings().recent(LISTED).await,
        );
        let rows = match read {
            (Ok(paired), Ok(recent)) => paired.into_iter().chain(recent).collect::<Vec<_>>(),
            (Err(e), _) | (_, Err(e)) => {
                tracing::error!(error = %e, "cannot read pairings");
                return "People could not be listed right now; try again.".into();
            }
        };
        let now = self.store.now_ms();
        let mut seen = std::collections::BTreeSet::new();
        let mut lines = Vec::new();
        for r in rows {
            // A paired row, or else the latest row, of each person with
            // each agent on each channel says where they stand.
            if !seen.insert((r.channel.clone(), r.agent.clone(), r.user_id.clone())) {
                continue;
            }
            let state = match r.status {
                PairingStatus::Pending if r.waiting(now) => "waiting".to_string(),
                PairingStatus::Pending => "code expired".to_string(),
                s => format!("{s} by {}", r.decided_by.as_deref().unwrap_or("?")),
            };
            lines.push(format!(
                "- {} ({}) on {} for {}: {state}",
                r.user_id, r.display_name, r.channel, r.agent
            ));
        }
        if lines.is_empty() {
            return "Nobody has asked to be let in.".into();
        }
        format!("People let in by pairing (paired first):\n{}", lines.join("\n"))
    }
}
