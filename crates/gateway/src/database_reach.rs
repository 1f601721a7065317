//! A command allowed the whole network (`network = "any"`, in a risk
//! profile or for an MCP server) reaches the control-plane database's
//! address like the gateway does. A database that lets it in without a
//! password would let it write approvals, console sessions and pairings:
//! decide its own requests. Such a configuration is refused at start and
//! on reload (docs/security.md, "The control plane").

use switchboard_config::{Config, NetworkAccess};

/// What may reach the whole network, by TOML table.
fn networked(config: &Config) -> Vec<String> {
    let profiles = config
        .risk_profiles
        .iter()
        .filter(|(_, p)| p.network == NetworkAccess::Any)
        .map(|(name, _)| format!("[risk_profiles.{name}]"));
    let servers = config
        .mcp_servers
        .iter()
        .filter(|(_, s)| s.network == NetworkAccess::Any)
        .map(|(name, _)| format!("[mcp_servers.{name}]"));
    profiles.chain(servers).collect()
}

/// Why `config` may not run: commands allowed the network could log into
/// its PostgreSQL control plane with no password. None otherwise (always
/// for SQLite, whose file commands cannot reach).
pub(crate) async fn refusal(config: &Config) -> Option<String> {
    let who = networked(config);
    if who.is_empty() {
        return None;
    }
    let open = switchboard_store::open_without_password(&config.database_url).await;
    if open.is_empty() {
        return None;
    }
    Some(format!(
        "the control-plane database lets {} in without a password, and {} may reach the whole network (network = \"any\"): a command could connect to it and approve its own requests. Require a password for the database's connections (pg_hba.conf: scram-sha-256; give it in database_url or PGPASSWORD), or set network = \"loopback\" or \"none\" there",
        open.join(", "),
        who.join(", ")
    ))
}
