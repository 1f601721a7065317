//! `[[routes]]`: which agent answers a message, picked by the most specific
//! match (docs/routes.md). Without routes, `agents.<a>.channels` says which
//! agent answers on a whole channel, as before.

use crate::ChannelsConfig;
use serde::{Deserialize, Serialize};

/// One `[[routes]]` table: what it matches, and who answers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Route {
    /// The channel instance (`discord.main`); required with `chat`,
    /// `thread` and `guild`, whose ids only mean something on one channel.
    #[serde(default)]
    pub channel: Option<String>,
    /// A Discord guild (server) id.
    #[serde(default)]
    pub guild: Option<String>,
    /// A chat: its platform id, or a name from the channel's `rooms`.
    #[serde(default)]
    pub chat: Option<String>,
    /// A thread or forum topic inside `chat`.
    #[serde(default)]
    pub thread: Option<String>,
    /// One person (`tg:7`): their messages go to `agent` wherever the rest
    /// of the route matches.
    #[serde(default)]
    pub person: Option<String>,
    /// The agent that answers (required).
    pub agent: String,
    /// Whether group messages must mention the bot (default: the channel's
    /// `require_mention_in_groups`).
    #[serde(default)]
    pub require_mention: Option<bool>,
    /// Who may talk here, replacing the channel's `allowed_users` for the
    /// messages this route takes (default: the channel's list).
    #[serde(default)]
    pub allowed_users: Option<Vec<String>>,
}

/// How specific a route is, least to most: a route of a higher level wins
/// over every route of a lower one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum RouteLevel {
    /// Matches everything (no keys).
    Default,
    /// A whole channel instance.
    Channel,
    /// A guild (Discord server).
    Guild,
    /// A chat (room, group, channel of a guild).
    Chat,
    /// A thread or topic.
    Thread,
    /// One person.
    Person,
}

impl RouteLevel {
    /// The word `/status` and `check` use.
    pub fn word(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::Channel => "channel",
            Self::Guild => "guild",
            Self::Chat => "chat",
            Self::Thread => "thread",
            Self::Person => "person",
        }
    }
}

/// Where a message was written and by whom: what routes are matched on.
#[derive(Debug, Clone, Copy)]
pub struct Place<'a> {
    /// The channel instance.
    pub channel: &'a str,
    /// The guild, where the platform has them.
    pub guild: Option<&'a str>,
    /// The chat id.
    pub chat: &'a str,
    /// The thread, if any.
    pub thread: Option<&'a str>,
    /// The sender's id.
    pub person: &'a str,
}

impl Route {
    /// How specific this route is (its most specific key).
    pub fn level(&self) -> RouteLevel {
        if self.person.is_some() {
            RouteLevel::Person
        } else if self.thread.is_some() {
            RouteLevel::Thread
        } else if self.chat.is_some() {
            RouteLevel::Chat
        } else if self.guild.is_some() {
            RouteLevel::Guild
        } else if self.channel.is_some() {
            RouteLevel::Channel
        } else {
            RouteLevel::Default
        }
    }

    /// Whether every key this route sets matches `p` (`chat` may be a room
    /// name of the channel, resolved through `channels`).
    pub fn matches(&self, channels: &ChannelsConfig, p: &Place<'_>) -> bool {
        let eq = |key: &Option<String>, value: Option<&str>| key.as_deref().is_none_or(|k| Some(k) == value);
        let chat_ok = self
            .chat
            .as_deref()
            .is_none_or(|c| c == p.chat || channels.resolve_room(p.channel, c) == p.chat);
        eq(&self.channel, Some(p.channel))
            && eq(&self.guild, p.guild)
            && chat_ok
            && eq(&self.thread, p.thread)
            && eq(&self.person, Some(p.person))
    }

    /// Whether one message could match both `self` and `other`: every key
    /// both set has the same value.
    pub fn overlaps(&self, other: &Route) -> bool {
        let same = |a: &Option<String>, b: &Option<String>| match (a, b) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        };
        same(&self.channel, &other.channel)
            && same(&self.guild, &other.guild)
            && same(&self.chat, &other.chat)
            && same(&self.thread, &other.thread)
            && same(&self.person, &other.person)
    }

    /// What it matches, for `/status` and `check` (`chat=-100 on telegram.main`).
    pub fn describe(&self) -> String {
        let keys: Vec<String> = [
            ("person", &self.person),
            ("thread", &self.thread),
            ("chat", &self.chat),
            ("guild", &self.guild),
            ("channel", &self.channel),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k} {v}")))
        .collect();
        if keys.is_empty() {
            "every message".into()
        } else {
            keys.join(", ")
        }
    }
}

/// The route that answers a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picked<'a> {
    /// The agent.
    pub agent: &'a str,
    /// The `[[routes]]` entry (its index), or `None` for an agent's
    /// `channels` list.
    pub route: Option<usize>,
    /// How specific the match was.
    pub level: RouteLevel,
    /// Whether group messages must mention the bot.
    pub require_mention: bool,
    /// Who may talk here.
    pub allowed_users: &'a [String],
}

impl Picked<'_> {
    /// Why this agent answers, for `/status`.
    pub fn why(&self, routes: &[Route]) -> String {
        match self.route.and_then(|i| routes.get(i)) {
            Some(r) => format!(
                "[[routes]] #{} matched by {}: {}",
                self.route.unwrap_or(0) + 1,
                self.level.word(),
                r.describe()
            ),
            None => format!("agents.{}.channels", self.agent),
        }
    }
}

#[cfg(test)]
mod tests;
