//! Which messages the gateway takes at all: checked before anything is
//! written, so strangers, chatter not meant for the bot and floods never
//! reach the inbox.

use super::rate;
use super::strangers::Strangers;
use crate::commands::{self, Command};
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

/// Identity, allow list (that of `route`, the route that takes `m`, or
/// the channel's; `paired`: an approver let the sender in), mention rule
/// and rate, in that order.
pub(super) fn admit(
    config: &Config,
    (rate, strangers): (&Mutex<rate::Window>, &Mutex<Strangers>),
    m: &Inbound,
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
    let allowed = crate::routing::users_of(config, route, channel);
    if !paired && !m.sender.is_listed_in(allowed) {
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
    let command = commands::of(m);
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
