//! What one configuration makes of the runtime — the configuration
//! itself, the providers built from it, each agent's policy and the
//! per-agent `delegate` tools — held as one value that a reload replaces whole
//! (docs/operations.md). A run takes what it needs when it is assembled,
//! so runs and the approvals they wait for keep the rules they started
//! with; only what starts after a reload sees the new ones.

use crate::policy::SecurityPolicy;
use crate::provider::ProviderSet;
use crate::tools::{BoundTool, ToolRegistry};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use switchboard_config::{AgentConfig, Config, DelegationMode, RiskProfile, RuntimeProfile};

/// See the module doc.
pub(crate) struct Rules {
    pub(crate) config: Arc<Config>,
    pub(crate) providers: Arc<ProviderSet>,
    /// Each configured agent, resolved once per configuration.
    agents: BTreeMap<String, Arc<AgentRules>>,
    /// The `delegate` tool as each agent is offered it (its schema names
    /// the agents it reaches), built once per configuration.
    delegate_tools: Mutex<HashMap<String, BoundTool>>,
}

impl Rules {
    /// Build them, creating each agent's workspace. An agent of
    /// `previous` whose hourly action cap is unchanged keeps its count of
    /// actions (a reload does not reset the budget).
    pub(crate) fn build(config: Arc<Config>, previous: Option<&Rules>) -> std::io::Result<Self> {
        let providers = Arc::new(ProviderSet::from_config(&config));
        let mut agents = BTreeMap::new();
        for (alias, agent) in &config.agents {
            let workspace = PathBuf::from(&config.workspace_dir).join(alias);
            std::fs::create_dir_all(&workspace)?;
            let workspace = workspace.canonicalize()?;
            let risk = config.risk_profiles.get(&agent.risk_profile).cloned();
            let runtime = config.runtime_profile_of(alias);
            let profile = risk.clone().unwrap_or_default();
            let mut policy =
                SecurityPolicy::new(&agent.risk_profile, &profile, workspace, runtime.max_actions_per_hour);
            if let Some(before) = previous.and_then(|p| p.agent(alias))
                && before.policy.tracker.limit() == policy.tracker.limit()
            {
                policy.tracker = before.policy.tracker.clone();
            }
            let resolved = AgentRules {
                name: alias.clone(),
                config: agent.clone(),
                risk,
                runtime,
                policy: Arc::new(policy),
            };
            agents.insert(alias.clone(), Arc::new(resolved));
        }
        Ok(Self {
            config,
            providers,
            agents,
            delegate_tools: Mutex::default(),
        })
    }

    /// Agent `name` as these rules make it; `None` when it is not
    /// configured. A run looks its agent up here once and carries it.
    pub(crate) fn agent(&self, name: &str) -> Option<&Arc<AgentRules>> {
        self.agents.get(name)
    }

    /// `registry` for a run acting as `agent`: its `delegate` tool, when it
    /// offers one, has the schema that names whom `agent` reaches.
    pub(crate) fn bind(&self, registry: ToolRegistry, agent: &str) -> ToolRegistry {
        let Some(tool) = registry.get("delegate").cloned() else {
            return registry;
        };
        let bound = self
            .delegate_tools
            .lock()
            .entry(agent.to_string())
            .or_insert_with(|| BoundTool::with_parameters(tool, &delegate_parameters(&self.config, agent)))
            .clone();
        registry.with_bound(bound)
    }
}

/// One `[agents.<alias>]` with what it names resolved: its risk and
/// runtime profiles and its command policy (workspace, action budget).
#[derive(Debug)]
pub(crate) struct AgentRules {
    /// The alias.
    pub(crate) name: String,
    /// Its configuration table.
    pub(crate) config: AgentConfig,
    /// The risk profile it names; `None` when that profile is missing,
    /// which validation refuses (were it loaded anyway, a top-level run
    /// of it is offered no tools and it cannot be an agentic delegate).
    pub(crate) risk: Option<RiskProfile>,
    /// Its runtime profile (the defaults when it names none that exists).
    pub(crate) runtime: RuntimeProfile,
    /// Its command and path policy.
    pub(crate) policy: Arc<SecurityPolicy>,
}

impl AgentRules {
    /// Its risk profile, or the defaults where the named one is missing.
    pub(crate) fn risk_or_default(&self) -> RiskProfile {
        self.risk.clone().unwrap_or_default()
    }
}

/// The `delegate` schema `agent` is offered: its `agent` argument names
/// the agents `agent` can reach (or why none).
fn delegate_parameters(config: &Config, agent: &str) -> serde_json::Value {
    let allowed = config
        .risk_profile_of(agent)
        .is_some_and(|p| p.delegation_policy.mode == DelegationMode::Allow);
    let roster: Vec<String> = config.reachable(agent).into_iter().map(|(a, _)| a).collect();
    let description = if allowed && !roster.is_empty() {
        format!("The agent to delegate to. Reachable agents: {}", roster.join(", "))
    } else if allowed {
        "The agent to delegate to. No agent is reachable from this one.".to_string()
    } else {
        "The agent to delegate to. Delegation is forbidden by this agent's risk profile.".to_string()
    };
    let mut schema = crate::tools::manifest_parameters("delegate");
    schema["properties"]["agent"]["description"] = serde_json::Value::String(description);
    schema
}
