//! Which messages the gateway takes at all: checked before anything is
//! written, so strangers, chatter not meant for the bot and floods never
//! reach the inbox.

use super::rate;
use super::strangers::Strangers;
use crate::commands::Command;
use parking_lot::Mutex;
use switchboard_config::{Config, Picked};
use switchboard_core::Inbound;

/// What becomes of one message.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Admission {
    /// Taken: written to the inbox and answered.
    Keep,
    /// Not taken; the sender is told why (through the outbox if need be).
    Tell(String),
    /// Not taken; a stranger is told once, with no retry and no outbox.
    Notice(String),
    /// Not taken; a stranger where people are let in by pairing: they
    /// get a code (`pairing`).
    Pair,
    /// Not taken, and nothing to say (not for the bot).
    Drop,
}

/// Identity, approvers' decisions (taken wherever they come from), allow
/// list (that of `route`, the route that takes `m`, or the channel's;
/// `paired`: an approver let the sender in; presses on prompts pass, to be
/// answered), mention rule and rate, in that order.
pub(super) fn admit(
    config: &Config,
    (rate, strangers): (&Mutex<rate::Window>, &Mutex<Strangers>),
    (m, command): (&Inbound, Option<&Command>),
    route: Option<&Picked<'_>>,
    paired: bool,
) -> Admission {
    let channel = &m.address.channel;
    // Identity comes from the platform that authenticated the person: an
    // id of another platform on this channel is refused outright.
    if !m.sender.belongs_to(channel) {
        tracing::warn!(%channel, sender = %m.sender, "message whose sender is not an id of this channel's platform refused");
        return Admission::Drop;
    }
    // Approvers' decisions reach the broker from any chat the bot sees (an
    // ops room need not be on the allow list, nor the approver on it).
    if command.is_some_and(|c| admitted_anywhere(config, m, c)) {
        return Admission::Keep;
    }
    // Anyone's press on a prompt is answered (never a silent spinner): the
    // broker tells them it is not theirs to decide; it counts against
    // their rate like any message.
    let pressed = matches!(m.action, switchboard_core::Action::Decide { .. });
    let allowed = crate::routing::users_of(config, route, channel);
    if !paired && !pressed && !m.sender.is_listed_in(allowed) {
        // Told once an hour, in direct chats only (see `strangers`).
        if m.direct && strangers.lock().tell(&m.sender, std::time::Instant::now()) {
            if allowed.iter().any(|u| u == "paired") {
                tracing::info!(%channel, sender = %m.sender, "a stranger wrote where people are let in by pairing");
                return Admission::Pair;
            }
            tracing::warn!(%channel, sender = %m.sender, "message from a sender not in allowed_users (told; further ones for an hour are dropped quietly)");
            return Admission::Notice(format!(
                "Sorry, {} may not use this bot here. An operator can add it to [channels.{}].allowed_users.",
                m.sender, channel
            ));
        }
        tracing::debug!(%channel, sender = %m.sender, direct = m.direct, "message from a sender not in allowed_users dropped");
        return Admission::Drop;
    }
    if matches!(command, Some(Command::ForAnotherBot)) {
        tracing::debug!(%channel, sender = %m.sender, "a command for another bot: ignored");
        return Admission::Drop;
    }
    let must_mention = route.map_or_else(|| config.channels.require_mention(channel), |r| r.require_mention);
    if command.is_none() && !m.direct && !m.mentioned && must_mention {
        tracing::debug!(%channel, chat = %m.address.chat, sender = %m.sender, "not mentioned in a group: ignored");
        return Admission::Drop;
    }
    // /stop, and approvers' answers, always get through; everything else
    // counts against the person's rate (see `rights::decides_unlimited`).
    let exempt = match command {
        Some(Command::Stop) => true,
        Some(Command::Decide { .. }) => crate::rights::decides_unlimited(config, &m.sender),
        _ => false,
    };
    if exempt {
        return Admission::Keep;
    }
    let limit = config.limits.messages_per_minute;
    let verdict = rate.lock().check(&m.sender, std::time::Instant::now(), limit);
    match verdict {
        rate::Verdict::Allowed => Admission::Keep,
        rate::Verdict::Limited { tell } => {
            tracing::warn!(%channel, sender = %m.sender, "message over the rate limit dropped");
            if tell {
                Admission::Tell(format!(
                    "{} is sending more than {limit} messages a minute; this one was not taken. Wait a moment and send it again.",
                    m.sender
                ))
            } else {
                Admission::Drop
            }
        }
    }
}

/// Whether `command` is taken wherever the bot sees it, whatever the
/// chat's allow list or pairing rule says: the decisions of an approver
/// named by some route (approval answers, letting people in and sending
/// them away), and a console link for whoever may sign in. The command
/// itself still decides what they may do there (`rights`).
fn admitted_anywhere(config: &Config, m: &Inbound, command: &Command) -> bool {
    let user = &m.sender;
    match command {
        Command::Decide { .. } => crate::rights::approves_somewhere(config, user),
        Command::Pair(_) | Command::Unpair(_) | Command::People => crate::rights::may_admit(config, user),
        Command::Console => crate::rights::may_sign_in(config, user),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands;
    use switchboard_core::{ApprovalChoice, ChatAddress, UserId};

    /// Strangers are let in by pairing, and the ops room is a group of the
    /// same bot; olga (tg:1) approves and is on no allow list.
    const CONFIG: &str = r#"
[providers.p]
kind = "openai"
base_url = "http://127.0.0.1:9/v1"
model = "m"

[agents.main]
model_provider = "p"
risk_profile = "ops"
channels = ["telegram.main"]

[risk_profiles.ops.approval_route]
approver_channel = "telegram.main"
approver_recipient = "-100"
approvers = ["tg:1"]

[web]
console_users = ["tg:3"]

[channels.telegram.main]
bot_token = "1:TEST"
allowed_users = ["paired"]
"#;

    fn judge(who: &str, text: &str, pressed: bool) -> Admission {
        let config = Config::from_toml_str(CONFIG, "admit.toml").unwrap();
        let mut m = Inbound::new(ChatAddress::new("telegram.main", "-100"), UserId(who.into()), text);
        if pressed {
            m.action = switchboard_core::Action::Decide {
                approval: "a1".into(),
                choice: ApprovalChoice::AllowOnce,
            };
        }
        let route = crate::routing::pick(&config, &m);
        let (rate, strangers) = (Mutex::default(), Mutex::default());
        let command = commands::of(&m);
        admit(
            &config,
            (&rate, &strangers),
            (&m, command.as_ref()),
            route.as_ref(),
            false,
        )
    }

    #[test]
    fn approvers_decisions_pass_any_allow_list_and_every_press_is_answered() {
        // The approver on no allow list: presses, typed answers and
        // pairing decisions are taken.
        assert_eq!(judge("tg:1", "", true), Admission::Keep);
        assert_eq!(judge("tg:1", "/approve a1", false), Admission::Keep);
        assert_eq!(judge("tg:1", "/pair ABC123", false), Admission::Keep);
        assert_eq!(judge("tg:1", "/unpair tg:9", false), Admission::Keep);
        // Anything else from them is not (they are on no allow list).
        assert_eq!(judge("tg:1", "/status", false), Admission::Drop);
        assert_eq!(judge("tg:1", "hello", false), Admission::Drop);
        // A console user may ask for a link, and nothing more.
        assert_eq!(judge("tg:3", "/console", false), Admission::Keep);
        assert_eq!(judge("tg:3", "/approve a1", false), Admission::Drop);
        // Anyone else's press is taken, to be answered "may not decide";
        // typing the command is not.
        assert_eq!(judge("tg:5", "", true), Admission::Keep);
        assert_eq!(judge("tg:5", "/approve a1", false), Admission::Drop);
        assert_eq!(judge("tg:5", "/pair ABC123", false), Admission::Drop);
    }
}
