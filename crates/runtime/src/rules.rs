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
use switchboard_config::{Config, DelegationMode};

/// See the module doc.
pub(crate) struct Rules {
    pub(crate) config: Arc<Config>,
    pub(crate) providers: Arc<ProviderSet>,
    pub(crate) policies: BTreeMap<String, Arc<SecurityPolicy>>,
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
        let mut policies = BTreeMap::new();
        for (alias, agent) in &config.agents {
            let workspace = PathBuf::from(&config.workspace_dir).join(alias);
            std::fs::create_dir_all(&workspace)?;
            let workspace = workspace.canonicalize()?;
            let profile = config
                .risk_profiles
                .get(&agent.risk_profile)
                .cloned()
                .unwrap_or_default();
            let hourly = config.runtime_profile_of(alias).max_actions_per_hour;
            let mut policy = SecurityPolicy::new(&agent.risk_profile, &profile, workspace, hourly);
            if let Some(before) = previous.and_then(|p| p.policies.get(alias))
                && before.tracker.limit() == policy.tracker.limit()
            {
                policy.tracker = before.tracker.clone();
            }
            policies.insert(alias.clone(), Arc::new(policy));
        }
        Ok(Self {
            config,
            providers,
            policies,
            delegate_tools: Mutex::default(),
        })
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
