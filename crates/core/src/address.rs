//! Where a message lives (`ChatAddress`) and who wrote it (`UserId`).

use crate::{ChannelKind, ChannelName};
use serde::{Deserialize, Serialize};
use std::fmt;

/// One conversation place: a channel instance (`telegram.main`), a chat in
/// it, and optionally a thread or topic inside that chat.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ChatAddress {
    /// The channel instance, `<kind>.<alias>` (`telegram.main`) or `cli`.
    pub channel: String,
    /// The platform's id of the chat (a Telegram chat id, a Matrix room id).
    pub chat: String,
    /// A thread or forum topic inside the chat, when there is one.
    pub thread: Option<String>,
}

impl ChatAddress {
    /// The top level of `chat` on `channel` (no thread).
    pub fn new(channel: impl Into<String>, chat: impl Into<String>) -> Self {
        Self {
            channel: channel.into(),
            chat: chat.into(),
            thread: None,
        }
    }

    /// The same chat, in `thread`.
    pub fn with_thread(mut self, thread: Option<String>) -> Self {
        self.thread = thread;
        self
    }

    /// The key of the conversation held at this address for `agent`.
    /// One conversation per (agent, channel, chat, thread).
    pub fn session_key(&self, agent: &str) -> String {
        crate::SessionKey::chat(agent, &self.channel, &self.chat, self.thread.as_deref()).into()
    }
}

impl fmt::Display for ChatAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.channel, self.chat)?;
        if let Some(t) = &self.thread {
            write!(f, "#{t}")?;
        }
        Ok(())
    }
}

/// A person, named the same way everywhere: `tg:<id>`, `discord:<id>`,
/// `@user:server` or `cli:<login>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct UserId(pub String);

impl UserId {
    /// The id as written (`tg:42`).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this id is one the platform of channel instance `channel`
    /// (`telegram.main`, `local.ops`, `cli`) hands out: `tg:` on Telegram,
    /// `discord:` on Discord, `@name:server` on Matrix, `cli:` on local
    /// chats and the terminal. A message whose sender is of another
    /// platform was not authenticated by the platform it came through.
    pub fn belongs_to(&self, channel: &str) -> bool {
        let id = self.0.as_str();
        let rest = match ChannelName::parse(channel).map(|n| n.kind) {
            Some(ChannelKind::Telegram) => id.strip_prefix("tg:"),
            Some(ChannelKind::Discord) => id.strip_prefix("discord:"),
            Some(ChannelKind::Matrix) => id.strip_prefix('@').filter(|r| r.contains(':')),
            Some(ChannelKind::Local) => id.strip_prefix("cli:"),
            None if channel == "cli" => id.strip_prefix("cli:"),
            None => None,
        };
        rest.is_some_and(|r| !r.is_empty())
    }

    /// Whether this user is admitted by an `allowed_users`-style list.
    /// `"*"` admits everyone; an empty list admits nobody.
    pub fn is_listed_in(&self, list: &[String]) -> bool {
        list.iter().any(|entry| entry == "*" || entry == &self.0)
    }
}

impl fmt::Display for UserId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_belong_to_their_platform_only() {
        let id = |s: &str| UserId(s.to_string());
        assert!(id("tg:42").belongs_to("telegram.main"));
        assert!(id("discord:42").belongs_to("discord.main"));
        assert!(id("@op:hs").belongs_to("matrix.main"));
        assert!(id("cli:ann").belongs_to("local.ops"));
        assert!(id("cli:ann").belongs_to("cli"));
        assert!(!id("tg:42").belongs_to("local.ops"));
        assert!(!id("@op:hs").belongs_to("telegram.main"));
        assert!(!id("cli:ann").belongs_to("matrix.main"));
        assert!(!id("tg:").belongs_to("telegram.main"));
        assert!(!id("@op").belongs_to("matrix.main"));
        assert!(!id("tg:1").belongs_to("unknown.x"));
    }

    #[test]
    fn session_key_separates_threads() {
        let a = ChatAddress::new("telegram.main", "-100");
        let b = a.clone().with_thread(Some("7".into()));
        assert_eq!(a.session_key("main"), "agent:main:telegram.main:-100");
        assert_eq!(b.session_key("main"), "agent:main:telegram.main:-100:7");
        assert_eq!(b.to_string(), "telegram.main:-100#7");
    }

    #[test]
    fn allow_lists() {
        let u = UserId("tg:1".into());
        assert!(u.is_listed_in(&["*".into()]));
        assert!(u.is_listed_in(&["tg:2".into(), "tg:1".into()]));
        assert!(!u.is_listed_in(&[]));
        assert!(!u.is_listed_in(&["tg:12".into()]));
    }
}
