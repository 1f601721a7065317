//! A configured channel instance's name, `<kind>.<alias>` (`telegram.main`,
//! `local.team`), read in one place; the terminal chat's `cli` is not one.

use std::fmt;

/// The kinds of channel tables (`[channels.<kind>.<alias>]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChannelKind {
    /// A Telegram bot.
    Telegram,
    /// A Discord bot.
    Discord,
    /// A Matrix account.
    Matrix,
    /// Chats on this machine, over the local API.
    Local,
}

impl ChannelKind {
    /// The word in names and tables.
    pub fn word(self) -> &'static str {
        match self {
            Self::Telegram => "telegram",
            Self::Discord => "discord",
            Self::Matrix => "matrix",
            Self::Local => "local",
        }
    }

    fn of(word: &str) -> Option<Self> {
        [Self::Telegram, Self::Discord, Self::Matrix, Self::Local]
            .into_iter()
            .find(|k| k.word() == word)
    }
}

/// `<kind>.<alias>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChannelName<'a> {
    /// Which kind of table.
    pub kind: ChannelKind,
    /// The table's alias.
    pub alias: &'a str,
}

impl<'a> ChannelName<'a> {
    /// Read `name`; `None` when it is not `<kind>.<alias>` of a known kind.
    pub fn parse(name: &'a str) -> Option<Self> {
        let (kind, alias) = name.split_once('.')?;
        let kind = ChannelKind::of(kind)?;
        (!alias.is_empty()).then_some(Self { kind, alias })
    }
}

impl fmt::Display for ChannelName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.kind.word(), self.alias)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_once() {
        let n = ChannelName::parse("telegram.main").unwrap();
        assert_eq!(
            (n.kind, n.alias, n.to_string().as_str()),
            (ChannelKind::Telegram, "main", "telegram.main")
        );
        assert_eq!(ChannelName::parse("local.team.x").unwrap().alias, "team.x");
        for bad in ["cli", "irc.main", "telegram.", ".main"] {
            assert_eq!(ChannelName::parse(bad), None, "{bad}");
        }
    }
}
