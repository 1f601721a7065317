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
}

impl ChannelsConfig {
    /// Every configured instance name (`telegram.main`), with its `enabled` flag.
    pub fn instances(&self) -> Vec<(String, bool)> {
        let mut out = Vec::new();
        out.extend(self.telegram.iter().map(|(a, c)| (format!("telegram.{a}"), c.enabled)));
        out.extend(self.discord.iter().map(|(a, c)| (format!("discord.{a}"), c.enabled)));
        out.extend(self.matrix.iter().map(|(a, c)| (format!("matrix.{a}"), c.enabled)));
        out
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
    #[serde(default)]
    pub allowed_users: Vec<String>,
    #[serde(default = "crate::agent::yes")]
    pub require_mention_in_groups: bool,
    #[serde(default)]
    pub rooms: BTreeMap<String, String>,
}
