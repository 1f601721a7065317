//! The local chats' hub, with their tokens (one per alias, or one per
//! person) resolved.

use switchboard_channel_local::LocalHub;
use switchboard_config::Config;

pub(super) fn hub(config: &Config, aliases: &[String]) -> anyhow::Result<LocalHub> {
    let (mut tokens, mut people) = (std::collections::BTreeMap::new(), std::collections::BTreeMap::new());
    for alias in aliases {
        let local = &config.channels.local[alias];
        if let Some(t) = &local.token {
            let token = t
                .resolve()
                .map_err(|e| anyhow::anyhow!("channels.local.{alias}.token: {e}"))?;
            tokens.insert(alias.clone(), token);
        }
        let mut list = Vec::new();
        for (name, secret) in &local.people {
            let token = secret
                .resolve()
                .map_err(|e| anyhow::anyhow!("channels.local.{alias}.people.{name}: {e}"))?;
            list.push((token, name.clone()));
        }
        if !list.is_empty() {
            people.insert(alias.clone(), list);
        }
    }
    Ok(LocalHub::new(aliases).with_tokens(tokens).with_people(people))
}
