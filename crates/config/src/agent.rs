//! `[agents.<alias>]`: the agents people talk to.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    #[serde(default = "yes")]
    pub enabled: bool,
    pub model_provider: String,
    #[serde(default = "default_profile")]
    pub risk_profile: String,
    #[serde(default = "default_profile")]
    pub runtime_profile: String,
    #[serde(default)]
    pub system_prompt: String,
    /// Channel instances (`telegram.main`) where this agent answers.
    #[serde(default)]
    pub channels: Vec<String>,
    #[serde(default)]
    pub delegates: Vec<DelegateEntry>,
    #[serde(default = "yes")]
    pub delegate_same_risk_profile: bool,
    #[serde(default)]
    pub workspace: WorkspaceConfig,
    #[serde(default)]
    pub subagents: SubagentsConfig,
}

pub(crate) fn yes() -> bool {
    true
}
pub(crate) fn default_profile() -> String {
    "default".into()
}

/// A `delegates` entry: a bare alias (bounded) or `{ agent, mode }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum DelegateEntry {
    Alias(String),
    Object {
        agent: String,
        #[serde(default)]
        mode: DelegateMode,
    },
}

impl DelegateEntry {
    pub fn agent(&self) -> &str {
        match self {
            Self::Alias(a) => a,
            Self::Object { agent, .. } => agent,
        }
    }

    pub fn mode(&self) -> DelegateMode {
        match self {
            Self::Alias(_) => DelegateMode::Bounded,
            Self::Object { mode, .. } => *mode,
        }
    }

    /// The explicit object form, as a saved configuration writes it.
    pub fn normalized(&self) -> Self {
        Self::Object {
            agent: self.agent().to_string(),
            mode: self.mode(),
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DelegateMode {
    #[default]
    Bounded,
    Independent,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceConfig {
    /// Other agents whose memory rows this agent may read.
    #[serde(default)]
    pub read_memory_from: Vec<String>,
}

/// `[agents.<alias>.subagents]`: `sessions_spawn` settings (docs/delegation.md).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(default)]
pub struct SubagentsConfig {
    /// Agents a child may run as; `["*"]` = any; empty = only this agent.
    pub allow_agents: Vec<String>,
    pub max_spawn_depth: u32,
    pub max_children_per_agent: u32,
    pub archive_after_minutes: u64,
    pub model: Option<String>,
    pub tools: SubagentTools,
}

impl Default for SubagentsConfig {
    fn default() -> Self {
        Self {
            allow_agents: Vec::new(),
            max_spawn_depth: 1,
            max_children_per_agent: 5,
            archive_after_minutes: 60,
            model: None,
            tools: SubagentTools::default(),
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubagentTools {
    #[serde(default)]
    pub deny: Vec<String>,
    #[serde(default)]
    pub allow: Vec<String>,
}
