//! Which route takes a message (`[[routes]]`, docs/routes.md): the intake
//! reads who may talk there and whether the bot must be mentioned, the
//! router which agent answers, `/status` why.

use switchboard_config::{Config, Picked, Place};
use switchboard_core::Inbound;

/// Where `m` was written, as routes match it.
pub(crate) fn place_of(m: &Inbound) -> Place<'_> {
    Place {
        channel: &m.address.channel,
        guild: m.guild.as_deref(),
        chat: &m.address.chat,
        thread: m.address.thread.as_deref(),
        person: m.sender.as_str(),
    }
}

/// The route that takes `m`, if any agent answers there.
pub(crate) fn pick<'a>(config: &'a Config, m: &Inbound) -> Option<Picked<'a>> {
    config.route_for(&place_of(m))
}

/// Who may talk where `m` was written: the route's list, or the channel's
/// when no route takes it.
pub(crate) fn allowed_users<'a>(config: &'a Config, m: &Inbound) -> &'a [String] {
    users_of(config, pick(config, m).as_ref(), &m.address.channel)
}

/// Who may talk on `channel` where `route` (already picked) takes a
/// message: its list, or the channel's when no route takes it.
pub(crate) fn users_of<'a>(config: &'a Config, route: Option<&Picked<'a>>, channel: &str) -> &'a [String] {
    route.map_or_else(
        || config.channels.allowed_users(channel).unwrap_or(&[]),
        |r| r.allowed_users,
    )
}

/// The route a message was taken by, decided once when it was taken and
/// carried with it: the agent that answers it and why (`/status`, the
/// console), so what runs and what is shown cannot disagree after a reload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Routed {
    /// The agent that answers.
    pub agent: String,
    /// Why (`[[routes]] #2 matched by chat: …`, or `agents.<a>.channels`).
    pub why: String,
}

impl Routed {
    /// The route `picked` (under `config`) as carried.
    pub(crate) fn of(config: &Config, picked: &Picked<'_>) -> Self {
        Self {
            agent: picked.agent.to_string(),
            why: picked.why(&config.routes),
        }
    }
}

/// The route that takes `m` now, as carried.
pub(crate) fn route_now(config: &Config, m: &Inbound) -> Option<Routed> {
    pick(config, m).map(|p| Routed::of(config, &p))
}
