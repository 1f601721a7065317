//! `[agents.<alias>]`: the agents people talk to.

use serde::{Deserialize, Serialize};

/// `[agents.<alias>]`: one agent.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// A disabled agent answers nowhere and cannot be delegated to (default true).
    #[serde(default = "yes")]
    pub enabled: bool,
    /// A provider name (required).
    pub model_provider: String,
    /// Other providers a conversation may switch to with `/model` (its `model_provider` is always one; default `[]`).
    #[serde(default)]
    pub models: Vec<String>,
    /// Summarise the oldest part of a conversation that outgrows the
    /// model's context instead of only leaving it out (default true;
    /// docs/conversations.md).
    #[serde(default = "yes")]
    pub compaction: bool,
    /// The provider that writes compaction summaries (default: the
    /// conversation's own model; docs/conversations.md).
    #[serde(default)]
    pub compaction_provider: Option<String>,
    /// A `[risk_profiles.<name>]` (default `default`).
    #[serde(default = "default_profile")]
    pub risk_profile: String,
    /// A `[runtime_profiles.<name>]` (built-in defaults when absent, default `default`).
    #[serde(default = "default_profile")]
    pub runtime_profile: String,
    /// The system message of every turn (default empty).
    #[serde(default)]
    pub system_prompt: String,
    /// Channel instances (`telegram.main`) where this agent answers.
    #[serde(default)]
    pub channels: Vec<String>,
    /// Agents `delegate` may hand work to: an alias (bounded) or
    /// `{ agent = "...", mode = "bounded" | "independent" }` (default `[]`).
    #[serde(default)]
    pub delegates: Vec<DelegateEntry>,
    /// Agents with the same risk profile can be delegated to (bounded) without being listed in `delegates` (default true).
    #[serde(default = "yes")]
    pub delegate_same_risk_profile: bool,
    /// Pictures people send are shown to the model as images (its
    /// provider must accept image content; default false: described only).
    #[serde(default)]
    pub vision: bool,
    /// `[mcp_servers.<name>]` whose tools this agent is offered (default `[]`; the risk profile's `allowed_tools` can narrow them).
    #[serde(default)]
    pub mcp_servers: Vec<String>,
    /// See `[agents.<name>.workspace]`.
    #[serde(default)]
    pub workspace: WorkspaceConfig,
    /// See `[agents.<name>.subagents]`.
    #[serde(default)]
    pub subagents: SubagentsConfig,
    /// The folder of this agent's skills, in its workspace (default
    /// `skills`; docs/skills.md).
    #[serde(default = "default_skills_dir")]
    pub skills_dir: String,
}

impl AgentConfig {
    /// The providers a conversation of this agent may use: its
    /// `model_provider` first, then `models`.
    pub fn model_choices(&self) -> Vec<&str> {
        let mut all = vec![self.model_provider.as_str()];
        for m in &self.models {
            if !all.contains(&m.as_str()) {
                all.push(m);
            }
        }
        all
    }
}

pub(crate) fn yes() -> bool {
    true
}
fn default_skills_dir() -> String {
    "skills".into()
}
pub(crate) fn default_profile() -> String {
    "default".into()
}

/// A `delegates` entry: a bare alias (bounded) or `{ agent, mode }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum DelegateEntry {
    /// `"reviewer"`: bounded.
    Alias(String),
    /// `{ agent = "reviewer", mode = "independent" }`.
    Object {
        /// The target agent.
        agent: String,
        /// How it runs.
        #[serde(default)]
        mode: DelegateMode,
    },
}

impl DelegateEntry {
    /// The target agent.
    pub fn agent(&self) -> &str {
        match self {
            Self::Alias(a) => a,
            Self::Object { agent, .. } => agent,
        }
    }

    /// How it runs.
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

/// How a delegate runs (docs/delegation.md).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DelegateMode {
    /// Inside the caller's tool ceiling, budgets and workspace; no operator.
    #[default]
    Bounded,
    /// Under the target's own policy and approval route.
    Independent,
}

/// `[agents.<alias>.workspace]`.
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
    /// How deep children may spawn children (default 1).
    pub max_spawn_depth: u32,
    /// Children of one session running at once (default 5).
    pub max_children_per_agent: u32,
    /// A finished child's transcript file is renamed `*.deleted.<timestamp>` after this long (default 60).
    pub archive_after_minutes: u64,
    /// Provider for children (default the agent's).
    pub model: Option<String>,
    /// `[agents.<alias>.subagents.tools]`.
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

/// `[agents.<alias>.subagents.tools]`: tools children are (not) offered.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubagentTools {
    /// Tools children are never offered (default `[]`).
    #[serde(default)]
    pub deny: Vec<String>,
    /// When not empty, the only tools children are offered (default `[]`).
    #[serde(default)]
    pub allow: Vec<String>,
}
