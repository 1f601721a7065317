//! `[channels.<kind>.<alias>]`: chat platform connections.

use crate::Secret;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelsConfig {
    #[serde(default)]
    pub telegram: BTreeMap<String, TelegramChannel>,
    #[serde(default)]
    pub discord: BTreeMap<String, DiscordChannel>,
    #[serde(default)]
    pub matrix: BTreeMap<String, MatrixChannel>,
    /// Chats on this machine, over the loopback HTTP API (`[web].listen`).
    #[serde(default)]
    pub local: BTreeMap<String, LocalChannel>,
}

impl ChannelsConfig {
    /// Every configured instance name (`telegram.main`), with its `enabled` flag.
    pub fn instances(&self) -> Vec<(String, bool)> {
        let mut out = Vec::new();
        out.extend(self.telegram.iter().map(|(a, c)| (format!("telegram.{a}"), c.enabled)));
        out.extend(self.discord.iter().map(|(a, c)| (format!("discord.{a}"), c.enabled)));
        out.extend(self.matrix.iter().map(|(a, c)| (format!("matrix.{a}"), c.enabled)));
        out.extend(self.local.iter().map(|(a, c)| (format!("local.{a}"), c.enabled)));
        out
    }

    /// Who may talk to the bot on instance `name` (`cli` admits its own user).
    pub fn allowed_users(&self, name: &str) -> Option<&[String]> {
        let (kind, alias) = name.split_once('.')?;
        Some(match kind {
            "telegram" => &self.telegram.get(alias)?.allowed_users,
            "discord" => &self.discord.get(alias)?.allowed_users,
            "matrix" => &self.matrix.get(alias)?.allowed_users,
            "local" => &self.local.get(alias)?.allowed_users,
            _ => return None,
        })
    }

    /// Whether group messages on `name` must mention the bot.
    pub fn require_mention(&self, name: &str) -> bool {
        let Some((kind, alias)) = name.split_once('.') else {
            return false;
        };
        match kind {
            "telegram" => self.telegram.get(alias).is_none_or(|c| c.require_mention_in_groups),
            "discord" => self.discord.get(alias).is_none_or(|c| c.require_mention_in_groups),
            "matrix" => self.matrix.get(alias).is_none_or(|c| c.require_mention_in_groups),
            "local" => self.local.get(alias).is_none_or(|c| c.require_mention_in_groups),
            _ => true,
        }
    }

    /// A chat named in an instance's `rooms` table, or the name itself.
    pub fn resolve_room(&self, name: &str, room: &str) -> String {
        let rooms = name.split_once('.').and_then(|(kind, alias)| match kind {
            "telegram" => self.telegram.get(alias).map(|c| &c.rooms),
            "discord" => self.discord.get(alias).map(|c| &c.rooms),
            "matrix" => self.matrix.get(alias).map(|c| &c.rooms),
            "local" => self.local.get(alias).map(|c| &c.rooms),
            _ => None,
        });
        rooms
            .and_then(|r| r.get(room))
            .cloned()
            .unwrap_or_else(|| room.to_string())
    }

    /// Whether `name` is a configured instance or the built-in `cli` channel.
    pub fn knows(&self, name: &str) -> bool {
        name == "cli" || self.instances().iter().any(|(n, _)| n == name)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TelegramChannel {
    #[serde(default = "crate::agent::yes")]
    pub enabled: bool,
    pub bot_token: Secret,
    #[serde(default = "telegram_api")]
    pub api_url: String,
    #[serde(default)]
    pub allowed_users: Vec<String>,
    #[serde(default = "crate::agent::yes")]
    pub require_mention_in_groups: bool,
    /// Names for chats, used by `approver_recipient` and `deliver_to`.
    #[serde(default)]
    pub rooms: BTreeMap<String, String>,
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

fn poll_timeout() -> u64 {
    25
}

fn sync_timeout() -> u64 {
    30
}

fn telegram_api() -> String {
    "https://api.telegram.org".into()
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiscordChannel {
    #[serde(default = "crate::agent::yes")]
    pub enabled: bool,
    pub bot_token: Secret,
    #[serde(default)]
    pub allowed_users: Vec<String>,
    #[serde(default = "crate::agent::yes")]
    pub require_mention_in_groups: bool,
    #[serde(default)]
    pub rooms: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatrixChannel {
    #[serde(default = "crate::agent::yes")]
    pub enabled: bool,
    pub homeserver: String,
    pub user_id: String,
    #[serde(default)]
    pub password: Option<Secret>,
    #[serde(default)]
    pub access_token: Option<Secret>,
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
    #[serde(default)]
    pub allowed_users: Vec<String>,
    #[serde(default = "crate::agent::yes")]
    pub require_mention_in_groups: bool,
    #[serde(default)]
    pub rooms: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LocalChannel {
    #[serde(default = "crate::agent::yes")]
    pub enabled: bool,
    /// Local users are named `cli:<name>`.
    #[serde(default)]
    pub allowed_users: Vec<String>,
    #[serde(default = "crate::agent::yes")]
    pub require_mention_in_groups: bool,
    #[serde(default)]
    pub rooms: BTreeMap<String, String>,
    /// When set, every request to this alias's API must carry
    /// `Authorization: Bearer <token>` (inline or `env:NAME`).
    #[serde(default)]
    pub token: Option<Secret>,
}
