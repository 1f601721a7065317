//! The whole configuration file.

use crate::{
    AgentConfig, ChannelsConfig, CostConfig, CronJob, Picked, Place, ProviderConfig, RiskProfile, Route, RouteLevel,
    RuntimeProfile,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The whole configuration (docs/configuration.md).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The control plane: `sqlite://PATH` (created 0600) or `postgres://...` (default `sqlite://data/control_plane.db`).
    #[serde(default = "default_db")]
    pub database_url: String,
    /// Agents' workspaces live in `<workspace_dir>/<agent>/`; their records in `<workspace_dir>/.records/<agent>/` (default `workspace`).
    #[serde(default = "default_workspace")]
    pub workspace_dir: String,
    /// A `NAME=value` file, beside the configuration, that `env:NAME`
    /// secrets are read from when the environment does not set them; only
    /// its owner may read it (what `switchboard init` writes).
    #[serde(default)]
    pub env_file: Option<String>,
    /// Model servers, see docs/configuration.md.
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderConfig>,
    /// The agents, see docs/configuration.md.
    #[serde(default)]
    pub agents: BTreeMap<String, AgentConfig>,
    /// What agents may do, see docs/configuration.md.
    #[serde(default)]
    pub risk_profiles: BTreeMap<String, RiskProfile>,
    /// Loop limits, see docs/configuration.md.
    #[serde(default)]
    pub runtime_profiles: BTreeMap<String, RuntimeProfile>,
    /// Spend tracking, see docs/configuration.md.
    #[serde(default)]
    pub cost: CostConfig,
    /// Chat platforms, see docs/configuration.md.
    #[serde(default)]
    pub channels: ChannelsConfig,
    /// Scheduled prompts, see docs/configuration.md.
    #[serde(default)]
    pub cron: Vec<CronJob>,
    /// The local HTTP surface.
    #[serde(default)]
    pub web: WebConfig,
    /// Global concurrency lanes.
    #[serde(default)]
    pub lanes: LanesConfig,
    /// Bounds on chat input.
    #[serde(default)]
    pub limits: crate::LimitsConfig,
    /// Retention of control-plane rows.
    #[serde(default)]
    pub storage: crate::StorageConfig,
    /// Files people send.
    #[serde(default)]
    pub attachments: crate::AttachmentsConfig,
    /// Voice messages transcribed before their turn (absent: off).
    #[serde(default)]
    pub transcription: Option<crate::TranscriptionConfig>,
    /// Several gateways on one database.
    #[serde(default)]
    pub cluster: crate::ClusterConfig,
    /// Model Context Protocol tool servers, see docs/mcp.md.
    #[serde(default)]
    pub mcp_servers: BTreeMap<String, crate::McpServerConfig>,
    /// Kernel confinement of tools.
    #[serde(default)]
    pub sandbox: crate::SandboxConfig,
    /// Metrics and health endpoints, see docs/operations.md.
    #[serde(default)]
    pub telemetry: crate::TelemetryConfig,
    /// Which agent answers which chat, see docs/routes.md.
    #[serde(default)]
    pub routes: Vec<crate::Route>,
    /// People and their ids on every platform, see docs/approvals.md.
    #[serde(default)]
    pub people: BTreeMap<String, crate::Person>,
    /// See `[skills]`.
    #[serde(default)]
    pub skills: SkillsConfig,
}

/// `[skills]`: skill folders every agent reads after its own (docs/skills.md).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkillsConfig {
    /// Shared skill folders, in order (default `[]`).
    #[serde(default)]
    pub dirs: Vec<String>,
}

/// `[lanes.*]`: global concurrency lanes.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LanesConfig {
    /// The lane `sessions_spawn` children run in.
    #[serde(default)]
    pub subagent: Lane,
}

/// One concurrency lane.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(default)]
pub struct Lane {
    /// Children running at once; the rest wait in the queue.
    pub max_concurrent: u32,
}

impl Default for Lane {
    fn default() -> Self {
        Self { max_concurrent: 8 }
    }
}

/// `[web]`: the local HTTP surface (local channels).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(default)]
pub struct WebConfig {
    /// The UNIX socket the local channels' API (and health and metrics)
    /// is served on: owner-only, outside every workspace. Relative paths
    /// are taken from the working folder, as the default database is.
    pub socket: String,
    /// A loopback TCP address to serve on as well (opt-in): the console,
    /// health and metrics, and the local API only for channels that know
    /// their people by token.
    pub listen: Option<String>,
    /// Serve the operator console under `/console` (docs/console.md).
    pub console: bool,
    /// People who may sign in to the console besides approvers.
    pub console_users: Vec<String>,
    /// The address people reach the console at (the sign-in link's base),
    /// e.g. `https://ops.example.com` behind a proxy; defaults to
    /// `http://<listen>`.
    pub public_url: Option<String>,
    /// Serve the console on this loopback address of its own instead of
    /// `listen` (required with `public_url`: point the reverse proxy here,
    /// so the local API is never reachable through it).
    pub console_listen: Option<String>,
}

impl Default for WebConfig {
    fn default() -> Self {
        Self {
            socket: "data/switchboard.sock".into(),
            listen: None,
            console: false,
            console_users: Vec::new(),
            public_url: None,
            console_listen: None,
        }
    }
}

impl WebConfig {
    /// The base of console links: `public_url` without a trailing slash,
    /// or `http://<console_listen or listen>`.
    pub fn base_url(&self) -> String {
        match (&self.public_url, self.console_listen.as_ref().or(self.listen.as_ref())) {
            (Some(u), _) => u.trim_end_matches('/').to_string(),
            (None, Some(addr)) => format!("http://{addr}"),
            (None, None) => "http://localhost".into(),
        }
    }

    /// Where the console is served over TCP: its own listener, or `listen`.
    pub fn console_addr(&self) -> Option<&str> {
        self.console_listen.as_deref().or(self.listen.as_deref())
    }
}

fn default_db() -> String {
    "sqlite://data/control_plane.db".into()
}
fn default_workspace() -> String {
    "workspace".into()
}

impl Config {
    /// The risk profile an agent runs under, when configured.
    pub fn risk_profile_of(&self, agent: &str) -> Option<&RiskProfile> {
        self.risk_profiles.get(&self.agents.get(agent)?.risk_profile)
    }

    /// The runtime profile of an agent, or the defaults.
    pub fn runtime_profile_of(&self, agent: &str) -> RuntimeProfile {
        self.agents
            .get(agent)
            .and_then(|a| self.runtime_profiles.get(&a.runtime_profile))
            .cloned()
            .unwrap_or_default()
    }

    /// Enabled agent aliases, sorted.
    pub fn enabled_agents(&self) -> Vec<&str> {
        self.agents
            .iter()
            .filter(|(_, a)| a.enabled)
            .map(|(n, _)| n.as_str())
            .collect()
    }
}

impl Config {
    /// Who `id` is: `person:<name>` when a `[people.<name>]` lists it,
    /// else the id itself.
    pub fn person_of(&self, id: &str) -> String {
        self.people
            .iter()
            .find(|(_, p)| p.ids.iter().any(|i| i == id))
            .map_or_else(|| id.to_string(), |(name, _)| format!("person:{name}"))
    }
}

impl Config {
    /// The route that answers a message written at `p`: the most specific
    /// `[[routes]]` entry whose agent is enabled; else the enabled agent
    /// whose `channels` lists the channel (as a channel-level route, below
    /// explicit channel routes); else a default route. `None`: nobody
    /// answers here.
    pub fn route_for<'a>(&'a self, p: &Place<'_>) -> Option<Picked<'a>> {
        let channel_users = self.channels.allowed_users(p.channel).unwrap_or(&[]);
        let channel_mention = self.channels.require_mention(p.channel);
        let enabled = |agent: &str| self.agents.get(agent).is_some_and(|a| a.enabled);
        // Every route that matches, most specific first: the first one
        // answers; a key it leaves unset comes from the next one that sets
        // it (a topic route inside a chat keeps the chat's allow list), and
        // then from the channel.
        let mut matching: Vec<(usize, &'a Route)> = self
            .routes
            .iter()
            .enumerate()
            .filter(|(_, r)| enabled(&r.agent) && r.matches(&self.channels, p))
            .collect();
        matching.sort_by_key(|(i, r)| (std::cmp::Reverse(r.level()), *i));
        let users = matching
            .iter()
            .find_map(|(_, r)| r.allowed_users.as_deref())
            .unwrap_or(channel_users);
        let mention = matching
            .iter()
            .find_map(|(_, r)| r.require_mention)
            .unwrap_or(channel_mention);
        let explicit = matching.first().map(|&(i, r)| Picked {
            agent: self.agents.get_key_value(&r.agent).map_or("", |(k, _)| k.as_str()),
            route: Some(i),
            level: r.level(),
            require_mention: mention,
            allowed_users: users,
        });
        if let Some(p) = explicit.as_ref()
            && p.level >= RouteLevel::Channel
        {
            return explicit;
        }
        let listed = self
            .agents
            .iter()
            .find(|(_, a)| a.enabled && a.channels.iter().any(|c| c == p.channel));
        if let Some((name, _)) = listed {
            return Some(Picked {
                agent: name.as_str(),
                route: None,
                level: RouteLevel::Channel,
                require_mention: channel_mention,
                allowed_users: channel_users,
            });
        }
        explicit
    }
}
