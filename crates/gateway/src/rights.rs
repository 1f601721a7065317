//! Who may do what, wherever they ask: chat commands, approval buttons and
//! reactions, and the operator console all call these, so a person is
//! allowed or refused the same action from every place (the table is in
//! docs/approvals.md, "Rights").
//!
//! An *operator* of an agent is one of the approvers its risk profile's
//! `approval_route` names — or anyone admitted, when it names none (a
//! setup without an ops room).

use switchboard_config::Config;
use switchboard_core::UserId;
use switchboard_store::{ApprovalRow, RunRow};

/// Whether `user` operates `agent` (see the module doc).
pub(crate) fn operates(config: &Config, user: &UserId, agent: &str) -> bool {
    let approvers = config
        .risk_profile_of(agent)
        .and_then(|p| p.approval_route.as_ref())
        .map(|r| r.approvers.as_slice())
        .unwrap_or_default();
    approvers.is_empty() || user.is_listed_in(approvers)
}

/// The people who may decide request `a` (named by its route when it was made).
pub(crate) fn approvers_of(a: &ApprovalRow) -> Vec<String> {
    a.approvers.clone()
}

/// Every approval route `config` names.
fn routes(config: &Config) -> impl Iterator<Item = &switchboard_config::ApprovalRoute> {
    config.risk_profiles.values().filter_map(|p| p.approval_route.as_ref())
}

/// Whether the configuration of now still makes `user` an approver of a
/// request asked under risk profile `profile` (a decision on a request
/// asked before a reload is checked against this as well as against the
/// approvers stored with it): named by that profile's route when it names
/// approvers, else by some route.
pub(crate) fn still_approver(config: &Config, user: &UserId, profile: Option<&str>) -> bool {
    let own = profile
        .and_then(|p| config.risk_profiles.get(p))
        .and_then(|p| p.approval_route.as_ref())
        .filter(|r| !r.approvers.is_empty());
    match own {
        Some(route) => user.is_listed_in(&route.approvers),
        None => routes(config).any(|r| user.is_listed_in(&r.approvers)),
    }
}

/// Whether a stored request was asked of the person who wrote rather than
/// of a route's approvers: it was posted outside every route's approver
/// channel. (Where the two coincide it counts as a route's request, and
/// only current approvers decide: the cautious reading.)
pub(crate) fn asked_of_originator(config: &Config, row: &ApprovalRow) -> bool {
    let channel = row.channel.as_deref().unwrap_or_default();
    !routes(config).any(|r| r.approver_channel.as_deref() == Some(channel))
}

/// Whether `user` may decide a request whose route named `approvers`.
pub(crate) fn may_decide(user: &UserId, approvers: &[String]) -> bool {
    user.is_listed_in(approvers)
}

/// Whether `user`'s answers to approval prompts skip the per-person rate
/// limit: an approver named by some route — or anyone, when some route
/// lets the person who wrote decide (`inherit-originator`). Others' answers
/// count like any message, so `/approve` cannot be used to flood.
pub(crate) fn decides_unlimited(config: &Config, user: &UserId) -> bool {
    routes(config).any(|r| {
        user.is_listed_in(&r.approvers) || r.on_no_approver == switchboard_config::OnNoApprover::InheritOriginator
    })
}

/// Whether `user` is named as an approver by some route (their decisions
/// are taken wherever the bot sees them; each request still checks its
/// own route's approvers).
pub(crate) fn approves_somewhere(config: &Config, user: &UserId) -> bool {
    routes(config).any(|r| user.is_listed_in(&r.approvers))
}

/// Whether `user` may let people in, send them away and list them
/// (pairing): an approver named by some route (exact ids).
pub(crate) fn may_admit(config: &Config, user: &UserId) -> bool {
    routes(config).any(|r| r.approvers.iter().any(|a| a == user.as_str()))
}

/// Whose a run is: the person who asked for it and the agent at the root
/// of its tree (the one a person talks to).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RunOwner {
    pub(crate) requester: Option<String>,
    pub(crate) root_agent: String,
}

impl RunOwner {
    /// The owner of run `r`.
    pub(crate) fn of(r: &RunRow) -> Self {
        Self {
            requester: r.requester.clone(),
            root_agent: r.owner_chain.first().cloned().unwrap_or_else(|| r.agent.clone()),
        }
    }
}

/// Whether `user` may kill a run (and its children), or steer it with
/// `/subagents send`: they asked for it, or they operate its root agent.
pub(crate) fn may_kill(config: &Config, user: &UserId, run: &RunOwner) -> bool {
    run.requester.as_deref() == Some(user.as_str()) || operates(config, user, &run.root_agent)
}

/// Whether `user` may stop a turn of `agent` that `owner` started.
pub(crate) fn may_stop(config: &Config, user: &UserId, owner: &UserId, agent: &str) -> bool {
    user == owner || operates(config, user, agent)
}

/// What a pause covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PauseScope<'a> {
    /// The trees of one agent.
    Agent(&'a str),
    /// Every agent.
    All,
}

/// Whether `user` may pause or resume spawning for `scope`: an operator of
/// that agent, or of every enabled agent for all of them.
pub(crate) fn may_pause(config: &Config, user: &UserId, scope: PauseScope<'_>) -> bool {
    match scope {
        PauseScope::Agent(agent) => operates(config, user, agent),
        PauseScope::All => config.enabled_agents().iter().all(|a| operates(config, user, a)),
    }
}

/// Whether `user` may sign in: named in `[web] console_users` or in some
/// risk profile's `approvers` (exact ids only: a `*` entry admits nobody
/// here).
pub(crate) fn may_sign_in(config: &Config, user: &UserId) -> bool {
    let named = |list: &[String]| list.iter().any(|u| u == user.as_str());
    named(&config.web.console_users) || routes(config).any(|r| named(&r.approvers))
}

#[cfg(test)]
mod tests;
