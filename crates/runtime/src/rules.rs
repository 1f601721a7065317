//! What one configuration makes of the runtime — the configuration
//! itself, the providers built from it, each agent's policy and the
//! per-identity tools — held as one value that a reload replaces whole
//! (docs/operations.md). A run takes what it needs when it is assembled,
//! so runs and the approvals they wait for keep the rules they started
//! with; only what starts after a reload sees the new ones.

use crate::policy::SecurityPolicy;
use crate::provider::ProviderSet;
use crate::tools::IdentityTools;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use switchboard_config::Config;

/// See the module doc.
pub(crate) struct Rules {
    pub(crate) config: Arc<Config>,
    pub(crate) providers: Arc<ProviderSet>,
    pub(crate) policies: BTreeMap<String, Arc<SecurityPolicy>>,
    /// Tools bound to an identity (`delegate` and its roster), built once
    /// per configuration.
    pub(crate) identity_tools: IdentityTools,
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
            identity_tools: IdentityTools::default(),
        })
    }
}
