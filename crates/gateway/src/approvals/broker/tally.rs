//! The two-person rule (`approvals_required = 2`): each allow is counted
//! once per person (`[people]` maps several ids to one), in the control
//! plane, so allows given on different gateways add up; the request is
//! decided when enough different people allowed it, and a deny by anyone
//! ends it (that path is the ordinary one).

use super::{RouteBroker, Via, told::no_longer_pending};
use switchboard_core::{ApprovalChoice, MessageRef, PromptState, UserId};
use switchboard_store::{Allow, Counted, VoteRow};

/// Where counting an allow left the request.
pub(super) enum Tally {
    /// Not decided yet (or not counted): tell the person this.
    Wait(String),
    /// Enough people allowed: decide it, by them, with this choice.
    Enough { by: String, choice: ApprovalChoice },
}

/// What counting an allow of a request is judged against.
pub(super) struct Standing<'a> {
    /// How many different people must allow it.
    pub required: u32,
    /// The requesting agent's risk profile, as configured now.
    pub profile: Option<&'a str>,
}

/// `tg:7 and tg:8`.
fn names(allows: &[VoteRow]) -> String {
    allows
        .iter()
        .map(|v| v.user_id.as_str())
        .collect::<Vec<_>>()
        .join(" and ")
}

/// Enough people allowed (`allows`): decided by them all, `always` only
/// when every one of them chose it.
fn enough(allows: &[VoteRow]) -> Tally {
    let choice = if allows.iter().all(|v| v.choice == ApprovalChoice::Always.word()) {
        ApprovalChoice::Always
    } else {
        ApprovalChoice::AllowOnce
    };
    Tally::Enough {
        by: names(allows),
        choice,
    }
}

impl RouteBroker {
    /// The allows of request `id` that count under the configuration in
    /// force: by someone still an approver of it (a reload may have taken
    /// one off), one per person as `[people]` maps them now (a mapping
    /// added since may make two stored allows one person's). The first of
    /// a person's allows stands for them. (A request that needs two people
    /// is never one asked of the person who wrote: only routes' approvers
    /// count here, whatever a reload did to the routes' channels.)
    async fn counting(&self, id: &str, standing: &Standing<'_>) -> Vec<VoteRow> {
        let config = self.config.get();
        let mut people = std::collections::HashSet::new();
        let mut allows = self.store.allows_of(id).await.unwrap_or_default();
        allows.retain(|v| {
            let user = UserId(v.user_id.clone());
            crate::rights::still_approver(&config, &user, standing.profile)
                && people.insert(config.person_of(&v.user_id))
        });
        allows
    }

    /// Where the counted allows leave request `id` after `user` allowed.
    async fn standing(&self, id: &str, user: &UserId, standing: &Standing<'_>, allows: Vec<VoteRow>) -> Tally {
        let (n, need) = (allows.len() as i64, i64::from(standing.required));
        if n >= need {
            return enough(&allows);
        }
        self.show_partial(id, &allows, standing.required).await;
        tracing::info!(approval = id, by = %user, have = n, need, "approval counted; waiting for another approver");
        Tally::Wait(format!(
            "Approval {id}: {n} of {need} approvals; it runs when another approver allows it."
        ))
    }

    /// Count `user`'s allow of request `id` (see [`Standing`]).
    pub(super) async fn tally(
        &self,
        id: &str,
        user: &UserId,
        from: Via<'_>,
        choice: ApprovalChoice,
        standing: Standing<'_>,
    ) -> Tally {
        let required = standing.required;
        let person = self.config.get().person_of(user.as_str());
        let from_text = from.to_string();
        let allow = Allow {
            approval: id,
            person: &person,
            user_id: user.as_str(),
            choice: choice.word(),
            from: &from_text,
        };
        let counted = match self.store.count_allow(&allow).await {
            Ok(c) => c,
            Err(e) => {
                tracing::error!(approval = id, error = %e, "cannot count an approval");
                return Tally::Wait(format!("Approval {id} could not be counted right now; try again."));
            }
        };
        let need = i64::from(required);
        match counted {
            Counted::Now(_) => {
                let allows = self.counting(id, &standing).await;
                self.standing(id, user, &standing, allows).await
            }
            Counted::Again => {
                // Enough allows counted, the request still pending: the
                // process that counted the last one stopped before deciding
                // it (a crash, a failed write). Pressed again, it is decided.
                let allows = self.counting(id, &standing).await;
                if allows.len() as i64 >= need {
                    tracing::warn!(approval = id, by = %user, "enough allows were counted but the request was never decided; deciding it now");
                    return enough(&allows);
                }
                // This person's allow was given through an id a reload
                // took off the route: given again through a current one, it
                // stands under that id.
                let config = self.config.get();
                let counted_mine = allows.iter().any(|v| config.person_of(&v.user_id) == person);
                if !counted_mine && self.store.move_allow(&allow).await.unwrap_or(false) {
                    let allows = self.counting(id, &standing).await;
                    return self.standing(id, user, &standing, allows).await;
                }
                let who = if person == user.as_str() {
                    user.to_string()
                } else {
                    format!("{user} ({person})")
                };
                Tally::Wait(format!(
                    "{who} has allowed approval {id} already: a person counts once. It needs another approver."
                ))
            }
            Counted::NotPending => Tally::Wait(match self.store.approvals().get(id).await {
                Ok(Some(row)) => no_longer_pending(&row),
                _ => format!("No approval request '{id}' is waiting."),
            }),
        }
    }

    /// Allows counted before the prompt's message id was stored: say so on
    /// the prompt. Of this and `show_partial` racing, at least one sees
    /// both the allow and the message id (both are read after their own
    /// write commits), so the prompt never stays silent about an allow.
    pub(super) async fn show_early_allows(&self, id: &str, need: u32) {
        match self.store.allows_of(id).await {
            Ok(allows) if !allows.is_empty() => self.show_partial(id, &allows, need).await,
            Ok(_) => {}
            Err(e) => tracing::warn!(approval = id, error = %e, "cannot read the allows counted so far"),
        }
    }

    /// Edit the prompt to say who allowed so far (where this gateway runs
    /// the approver channel); its buttons stay.
    async fn show_partial(&self, id: &str, allows: &[VoteRow], need: u32) {
        // Decided meanwhile (a second allow, a deny): its final edit stands.
        let Ok(Some(row)) = self.store.approvals().get(id).await else {
            return;
        };
        if row.status != switchboard_store::ApprovalStatus::Pending {
            return;
        }
        let (Some(channel), Some(chat), Some(message)) = (&row.channel, &row.chat, &row.prompt_message) else {
            return;
        };
        let prompt = crate::approvals::prompt_of_row(&row);
        let at = MessageRef {
            chat: chat.clone(),
            id: message.clone(),
        };
        let state = PromptState::Partial {
            allowed_by: allows.iter().map(|v| v.user_id.clone()).collect(),
            need,
        };
        self.edit_prompt(channel, &at, &prompt, &state).await;
    }
}
