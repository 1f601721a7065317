//! Every channel adapter of the configuration, built in one place: the
//! local chats (one hub serving them all), Telegram, Discord and Matrix.
//! Secrets (`env:NAME`) are resolved here; an error names the key to fix.

mod local;
mod matrix;

use crate::channels::ChannelSet;
use std::sync::Arc;
use switchboard_channel_local::LocalHub;
use switchboard_config::{ChannelKind, ChannelName, Config};
use switchboard_core::Channel;

/// The adapters of a configuration, not started yet.
pub(crate) struct Adapters {
    pub(crate) channels: ChannelSet,
    /// The local chats' HTTP API (served on `[web].listen`).
    pub(crate) hub: LocalHub,
    /// The enabled local aliases.
    pub(crate) local_aliases: Vec<String>,
}

/// Build every enabled channel `config` names.
pub(crate) fn build(config: &Config) -> anyhow::Result<Adapters> {
    let mut channels = ChannelSet::default();
    let local_aliases: Vec<String> = config
        .channels
        .local
        .iter()
        .filter(|(_, c)| c.enabled)
        .map(|(a, _)| a.clone())
        .collect();
    let hub = local::hub(config, &local_aliases)?;
    for ch in hub.channels() {
        channels.insert(ch.clone() as Arc<dyn Channel>);
    }
    for (alias, t) in config.channels.telegram.iter().filter(|(_, t)| t.enabled) {
        channels.insert(Arc::new(telegram(alias, t)?));
    }
    for (alias, d) in config.channels.discord.iter().filter(|(_, d)| d.enabled) {
        channels.insert(Arc::new(discord(alias, d)?));
    }
    for (alias, m) in config.channels.matrix.iter().filter(|(_, m)| m.enabled) {
        channels.insert(Arc::new(matrix::channel(alias, m)?));
    }
    for (name, enabled) in config.channels.instances() {
        if enabled && channels.get(&name).is_none() {
            tracing::warn!(channel = %name, "configured, but this build has no adapter for it yet; it is not started");
        }
    }
    Ok(Adapters {
        channels,
        hub,
        local_aliases,
    })
}

/// The adapter of platform channel `name` (`telegram.x`, `discord.x`,
/// `matrix.x`) as `config` describes it, not started (a reload starts it).
pub(crate) fn build_one(config: &Config, name: &str) -> anyhow::Result<Arc<dyn Channel>> {
    let missing = || anyhow::anyhow!("{name}: no such channel table");
    let ChannelName { kind, alias } = ChannelName::parse(name).ok_or_else(missing)?;
    let c = &config.channels;
    Ok(match kind {
        ChannelKind::Telegram => Arc::new(telegram(alias, c.telegram.get(alias).ok_or_else(missing)?)?),
        ChannelKind::Discord => Arc::new(discord(alias, c.discord.get(alias).ok_or_else(missing)?)?),
        ChannelKind::Matrix => Arc::new(matrix::channel(alias, c.matrix.get(alias).ok_or_else(missing)?)?),
        ChannelKind::Local => anyhow::bail!("{name}: only platform channels start on a reload"),
    })
}

fn telegram(
    alias: &str,
    t: &switchboard_config::TelegramChannel,
) -> anyhow::Result<switchboard_channel_telegram::TelegramChannel> {
    let token = t
        .bot_token
        .resolve()
        .map_err(|e| anyhow::anyhow!("channels.telegram.{alias}.bot_token: {e}"))?;
    let webhook = match (&t.webhook_url, &t.webhook_listen, &t.webhook_secret) {
        (Some(url), Some(listen), Some(secret)) => Some(switchboard_channel_telegram::Webhook {
            url: url.clone(),
            listen: listen.clone(),
            secret: secret
                .resolve()
                .map_err(|e| anyhow::anyhow!("channels.telegram.{alias}.webhook_secret: {e}"))?,
        }),
        _ => None,
    };
    switchboard_channel_telegram::TelegramChannel::new(
        &format!("telegram.{alias}"),
        &token,
        &t.api_url,
        webhook,
        std::time::Duration::from_secs(t.poll_timeout_secs),
    )
    .map_err(|e| anyhow::anyhow!("channels.telegram.{alias}: {e}"))
}

fn discord(
    alias: &str,
    d: &switchboard_config::DiscordChannel,
) -> anyhow::Result<switchboard_channel_discord::DiscordChannel> {
    let token = d
        .bot_token
        .resolve()
        .map_err(|e| anyhow::anyhow!("channels.discord.{alias}.bot_token: {e}"))?;
    let settings = switchboard_channel_discord::Settings {
        guilds: d.guilds.iter().filter_map(|g| g.parse().ok()).collect(),
        api_url: d.api_url.clone(),
        gateway_url: d.gateway_url.clone(),
    };
    switchboard_channel_discord::DiscordChannel::new(&format!("discord.{alias}"), &token, settings)
        .map_err(|e| anyhow::anyhow!("channels.discord.{alias}: {e}"))
}
