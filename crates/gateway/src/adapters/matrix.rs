//! The Matrix adapter's settings, from `[channels.matrix.<alias>]`.

use std::time::Duration;
use switchboard_channel_matrix::{Auth, MatrixChannel, Settings};
use switchboard_config::MatrixChannel as MatrixConfig;

pub(super) fn channel(alias: &str, m: &MatrixConfig) -> anyhow::Result<MatrixChannel> {
    let at = |k: &str| format!("channels.matrix.{alias}.{k}");
    let auth = match (&m.access_token, &m.password) {
        (Some(t), _) => Auth::AccessToken(
            t.resolve()
                .map_err(|e| anyhow::anyhow!("{}: {e}", at("access_token")))?,
        ),
        (None, Some(p)) => Auth::Password(p.resolve().map_err(|e| anyhow::anyhow!("{}: {e}", at("password")))?),
        (None, None) => anyhow::bail!("channels.matrix.{alias}: set password or access_token"),
    };
    let store_passphrase = match &m.store_passphrase {
        Some(p) => Some(
            p.resolve()
                .map_err(|e| anyhow::anyhow!("{}: {e}", at("store_passphrase")))?,
        ),
        None => None,
    };
    let settings = Settings {
        name: format!("matrix.{alias}"),
        homeserver: m.homeserver.clone(),
        user_id: m.user_id.clone(),
        auth,
        store_dir: m
            .store_dir
            .clone()
            .unwrap_or_else(|| format!("data/matrix/{alias}"))
            .into(),
        store_passphrase,
        auto_join: m.auto_join.clone(),
        invites_from: if m.join_on_invite {
            m.allowed_users.clone()
        } else {
            Vec::new()
        },
        sync_timeout: Duration::from_secs(m.sync_timeout_secs),
    };
    MatrixChannel::new(settings).map_err(|e| anyhow::anyhow!("channels.matrix.{alias}: {e}"))
}
