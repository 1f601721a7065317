//! `[channels.<kind>.<alias>]`: chat platform connections.

use crate::{ChannelKind, ChannelName, Secret};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A channel table (`[channels.<kind>.<alias>]`): `enabled`, the kind's
/// own settings, the settings every kind has (who is admitted and how
/// answers show), then (after `then`) more of its own. A chat platform's
/// (`platform`) also has the merge window and status reactions. Written
/// once here because serde's `flatten` does not combine with
/// `deny_unknown_fields`, which a typo in a channel table needs.
macro_rules! chat_table {
    (platform $(#[$meta:meta])* pub struct $name:ident { $($own:tt)* } $(then { $($more:tt)* })?) => {
        chat_table! {
            $(#[$meta])*
            pub struct $name { $($own)* } then {
                /// Messages from one person that arrive within this many milliseconds
                /// of each other, before their turn starts, become one turn (default
                /// 0: no wait, messages join a turn until the model writes;
                /// docs/conversations.md).
                #[serde(default = "merge_window_default")]
                pub merge_window_ms: u64,
                /// Reactions on the person's message while it is handled: taken,
                /// working, done or failed (default true).
                #[serde(default = "crate::agent::yes")]
                pub status_reactions: bool,
                $($($more)*)?
            }
        }
    };
    ($(#[$meta:meta])* pub struct $name:ident { $($own:tt)* } then { $($more:tt)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Serialize, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            /// Whether this channel runs (default true).
            #[serde(default = "crate::agent::yes")]
            pub enabled: bool,
            $($own)*
            /// Who may talk to the bot: platform ids (`cli:<name>` on a
            /// local chat), or `\"*\"` for anyone; empty: nobody.
            #[serde(default)]
            pub allowed_users: Vec<String>,
            /// In groups, answer only when mentioned or replied to (default true).
            #[serde(default = "crate::agent::yes")]
            pub require_mention_in_groups: bool,
            /// Show answers while they are written: `"edit"` (one message edited
            /// as it grows) or `"off"`; unset: in direct chats only.
            #[serde(default)]
            pub streaming: Option<Streaming>,
            /// Names for chats, used by `approver_recipient` and `deliver_to`.
            #[serde(default)]
            pub rooms: BTreeMap<String, String>,
            $($more)*
        }
    };
}

/// `[channels]`: every chat platform connection, by kind and alias.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelsConfig {
    /// `[channels.telegram.<alias>]` tables.
    #[serde(default)]
    pub telegram: BTreeMap<String, TelegramChannel>,
    /// `[channels.discord.<alias>]` tables.
    #[serde(default)]
    pub discord: BTreeMap<String, DiscordChannel>,
    /// `[channels.matrix.<alias>]` tables.
    #[serde(default)]
    pub matrix: BTreeMap<String, MatrixChannel>,
    /// Chats on this machine, over the loopback HTTP API (`[web].listen`).
    #[serde(default)]
    pub local: BTreeMap<String, LocalChannel>,
}

impl ChannelsConfig {
    /// Every configured instance name (`telegram.main`), with its `enabled` flag.
    pub fn instances(&self) -> Vec<(String, bool)> {
        let name = |kind: ChannelKind, alias: &str| ChannelName { kind, alias }.to_string();
        let mut out = Vec::new();
        out.extend(
            self.telegram
                .iter()
                .map(|(a, c)| (name(ChannelKind::Telegram, a), c.enabled)),
        );
        out.extend(
            self.discord
                .iter()
                .map(|(a, c)| (name(ChannelKind::Discord, a), c.enabled)),
        );
        out.extend(
            self.matrix
                .iter()
                .map(|(a, c)| (name(ChannelKind::Matrix, a), c.enabled)),
        );
        out.extend(self.local.iter().map(|(a, c)| (name(ChannelKind::Local, a), c.enabled)));
        out
    }

    /// What every kind of channel table says of the instance `name`
    /// (`telegram.main`), read in one place.
    fn shared(&self, name: &str) -> Option<Shared<'_>> {
        let ChannelName { kind, alias } = ChannelName::parse(name)?;
        macro_rules! shared {
            ($table:expr, $reactions:expr) => {{
                let c = $table.get(alias)?;
                Shared {
                    allowed_users: &c.allowed_users,
                    require_mention: c.require_mention_in_groups,
                    merge_window_ms: c.merge_window_ms,
                    status_reactions: $reactions(c),
                    streaming: c.streaming,
                    rooms: &c.rooms,
                }
            }};
        }
        Some(match kind {
            ChannelKind::Telegram => shared!(self.telegram, |c: &TelegramChannel| c.status_reactions),
            ChannelKind::Discord => shared!(self.discord, |c: &DiscordChannel| c.status_reactions),
            ChannelKind::Matrix => shared!(self.matrix, |c: &MatrixChannel| c.status_reactions),
            // Local chats have no reactions to show.
            ChannelKind::Local => shared!(self.local, |_: &LocalChannel| false),
        })
    }

    /// Who may talk to the bot on instance `name` (`cli` admits its own user).
    pub fn allowed_users(&self, name: &str) -> Option<&[String]> {
        self.shared(name).map(|s| s.allowed_users)
    }

    /// Whether group messages on `name` must mention the bot (an unknown
    /// instance: yes; the terminal's `cli`: no).
    pub fn require_mention(&self, name: &str) -> bool {
        name.contains('.') && self.shared(name).is_none_or(|s| s.require_mention)
    }

    /// How long (ms) a person's next message may follow the previous one on
    /// `name` and still join its turn (0: never).
    pub fn merge_window_ms(&self, name: &str) -> u64 {
        self.shared(name).map_or(0, |s| s.merge_window_ms)
    }

    /// Whether `name` shows status reactions on people's messages.
    pub fn status_reactions(&self, name: &str) -> bool {
        self.shared(name).is_some_and(|s| s.status_reactions)
    }

    /// Whether answers on `name` are streamed into a chat that is direct
    /// (`direct`) or a group.
    pub fn streams(&self, name: &str, direct: bool) -> bool {
        match self.shared(name).and_then(|s| s.streaming) {
            Some(Streaming::Edit) => true,
            Some(Streaming::Off) => false,
            None => direct,
        }
    }

    /// A chat named in an instance's `rooms` table, or the name itself.
    pub fn resolve_room(&self, name: &str, room: &str) -> String {
        self.shared(name)
            .and_then(|s| s.rooms.get(room))
            .cloned()
            .unwrap_or_else(|| room.to_string())
    }

    /// Whether `name` is a configured instance or the built-in `cli` channel.
    pub fn knows(&self, name: &str) -> bool {
        name == "cli" || self.instances().iter().any(|(n, _)| n == name)
    }
}

/// The settings every kind of channel table has.
struct Shared<'a> {
    allowed_users: &'a [String],
    require_mention: bool,
    merge_window_ms: u64,
    status_reactions: bool,
    streaming: Option<Streaming>,
    rooms: &'a BTreeMap<String, String>,
}

/// How answers are shown while the model writes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Streaming {
    /// Only the finished answer is sent.
    Off,
    /// One message is posted early and edited as the answer grows, within
    /// the platform's edit rate.
    Edit,
}

chat_table! {
    platform
    /// `[channels.telegram.<alias>]`: one Telegram bot.
    pub struct TelegramChannel {
        /// From @BotFather (required).
        pub bot_token: Secret,
        /// The Bot API server (a local one, or a test peer, default `https://api.telegram.org`).
        #[serde(default = "telegram_api")]
        pub api_url: String,
    } then {
        /// Webhook mode: the public HTTPS URL Telegram posts updates to (else
        /// long polling). Needs `webhook_listen` and `webhook_secret`.
        #[serde(default)]
        pub webhook_url: Option<String>,
        /// Local address the webhook server listens on, e.g. `127.0.0.1:8443`
        /// (behind your TLS-terminating proxy).
        #[serde(default)]
        pub webhook_listen: Option<String>,
        /// Secret Telegram sends with every update; requests without it are refused.
        #[serde(default)]
        pub webhook_secret: Option<Secret>,
        /// How long Telegram may hold one `getUpdates` long poll, in seconds
        /// (its HTTP client waits 10 s longer).
        #[serde(default = "poll_timeout")]
        pub poll_timeout_secs: u64,
    }
}

fn poll_timeout() -> u64 {
    25
}

fn sync_timeout() -> u64 {
    30
}

fn telegram_api() -> String {
    "https://api.telegram.org".into()
}

chat_table! {
    platform
    /// `[channels.discord.<alias>]`: one Discord bot.
    pub struct DiscordChannel {
        /// The bot's token (required).
        pub bot_token: Secret,
        /// Guild ids the bot answers in (default `[]`: every guild it is in).
        #[serde(default)]
        pub guilds: Vec<String>,
        /// A Discord-compatible server instead of discord.com (tests; default none).
        #[serde(default)]
        pub api_url: Option<String>,
        /// The gateway websocket to connect to instead of the one the API
        /// names (default none).
        #[serde(default)]
        pub gateway_url: Option<String>,
    }
}

chat_table! {
    platform
    /// `[channels.matrix.<alias>]`: one Matrix account.
    pub struct MatrixChannel {
        /// The homeserver URL (required).
        pub homeserver: String,
        /// The bot's account (required).
        pub user_id: String,
        /// Log in with a password (a device is created once and kept, default none).
        #[serde(default)]
        pub password: Option<Secret>,
        /// Or with a token (default none).
        #[serde(default)]
        pub access_token: Option<Secret>,
        /// Rooms (ids or aliases) joined at start (default `[]`).
        #[serde(default)]
        pub auto_join: Vec<String>,
        /// Accept invitations from people `allowed_users` admits.
        #[serde(default)]
        pub join_on_invite: bool,
        /// Where matrix-sdk keeps its state, crypto keys and session
        /// (default `data/matrix/<alias>`).
        #[serde(default)]
        pub store_dir: Option<String>,
        /// Passphrase that encrypts matrix-sdk's store.
        #[serde(default)]
        pub store_passphrase: Option<Secret>,
        /// Long-poll timeout of one `/sync`, in seconds.
        #[serde(default = "sync_timeout")]
        pub sync_timeout_secs: u64,
    }
}

chat_table! {
    /// `[channels.local.<alias>]`: chats over the loopback API.
    pub struct LocalChannel {} then {
        /// Messages from one person that arrive within this many milliseconds
        /// of each other, before their turn starts, become one turn (default 0:
        /// programs and the terminal send whole messages; docs/conversations.md).
        #[serde(default)]
        pub merge_window_ms: u64,
        /// When set, every request to this alias's API must carry
        /// `Authorization: Bearer <token>` (inline or `env:NAME`).
        #[serde(default)]
        pub token: Option<Secret>,
        /// `[channels.local.<alias>.people]`: `name = "env:TOKEN"`. When set,
        /// each request's bearer token says who is calling (`cli:<name>`),
        /// and a caller sees only the chats they are in.
        #[serde(default)]
        pub people: BTreeMap<String, Secret>,
    }
}

fn merge_window_default() -> u64 {
    0
}
