//! `[[routes]]`, `[people]` and the two-person rule: names that exist,
//! routes that cannot tie, and a rule that can be met.

use super::{USER_FORMS, user_list, valid_user_id};
use crate::{Config, Problem, RouteLevel};

/// `[[routes]]`: known agents and channels, ids only with their channel,
/// and no two routes of one level that one message could both match.
pub(super) fn routes(c: &Config, v: &mut Vec<Problem>) {
    for (i, r) in c.routes.iter().enumerate() {
        let at = |k: &str| format!("routes[{i}].{k}");
        if !c.agents.contains_key(&r.agent) {
            v.push(Problem::new(
                at("agent"),
                format!("unknown agent '{}'; name one of [agents.<alias>]", r.agent),
            ));
        }
        match &r.channel {
            Some(ch) if !c.channels.knows(ch) => v.push(Problem::new(
                at("channel"),
                format!("unknown channel '{ch}'; configure [channels.<kind>.<alias>] for it"),
            )),
            None if r.chat.is_some() || r.thread.is_some() || r.guild.is_some() => v.push(Problem::new(
                at("channel"),
                "missing: chat, thread and guild ids mean something only on one channel; name it (e.g. \"discord.main\")",
            )),
            _ => {}
        }
        if r.guild.is_some()
            && !r
                .channel
                .as_deref()
                .and_then(crate::ChannelName::parse)
                .is_some_and(|n| n.kind == crate::ChannelKind::Discord)
        {
            v.push(Problem::new(
                at("guild"),
                "guilds are Discord's; set channel = \"discord.<alias>\"",
            ));
        }
        if r.thread.is_some() && r.chat.is_none() {
            v.push(Problem::new(
                at("chat"),
                "missing: a thread is inside a chat; name the chat too",
            ));
        }
        if let Some(p) = &r.person
            && !valid_user_id(p)
        {
            v.push(Problem::new(
                at("person"),
                format!("'{p}' is not a user id; {USER_FORMS}"),
            ));
        }
        if let Some(users) = &r.allowed_users {
            user_list(&at("allowed_users"), users, true, v);
        }
        for (j, other) in c.routes.iter().enumerate().skip(i + 1) {
            if r.level() == other.level() && r.overlaps(other) {
                let tie = if r.level() == RouteLevel::Default {
                    "both match every message".to_string()
                } else {
                    format!(
                        "both match {} at the same level ({})",
                        other.describe(),
                        r.level().word()
                    )
                };
                v.push(Problem::new(
                    format!("routes[{j}]"),
                    format!("overlaps routes[{i}]: {tie}; make one more specific or remove it"),
                ));
            }
        }
    }
}

/// `[people.<name>]`: real ids, each in one person only.
pub(super) fn people(c: &Config, v: &mut Vec<Problem>) {
    let mut seen: std::collections::BTreeMap<&str, &str> = Default::default();
    for (name, p) in &c.people {
        let at = format!("people.{name}.ids");
        if p.ids.is_empty() {
            v.push(Problem::new(
                &at,
                "empty: list the person's ids (tg:7, @ann:example.org, ...)",
            ));
        }
        user_list(&at, &p.ids, false, v);
        for id in &p.ids {
            if let Some(first) = seen.insert(id, name) {
                v.push(Problem::new(
                    &at,
                    format!("'{id}' is listed for [people.{first}] too; an id belongs to one person"),
                ));
            }
        }
    }
}

/// `approvals_required`: 1 or 2, with enough different approvers to meet it.
pub(super) fn two_person(c: &Config, v: &mut Vec<Problem>) {
    for (name, r) in &c.risk_profiles {
        let Some(route) = &r.approval_route else {
            continue;
        };
        let at = |k: &str| format!("risk_profiles.{name}.approval_route.{k}");
        if !(1..=2).contains(&route.approvals_required) {
            v.push(Problem::new(at("approvals_required"), "use 1 or 2"));
            continue;
        }
        let mut people: Vec<String> = route.approvers.iter().map(|a| c.person_of(a)).collect();
        people.sort();
        people.dedup();
        if route.approvals_required == 2 && people.len() < 2 {
            v.push(Problem::new(
                at("approvers"),
                "approvals_required = 2 needs at least two different people among the approvers ([people] maps several ids to one person)",
            ));
        }
    }
}
