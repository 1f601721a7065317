//! The runtime: configuration, store, providers and per-agent policies,
//! and the entry point that runs one turn for a session.

use crate::agent::{AgentRun, TurnError, TurnEvent, TurnReply};
use crate::approval::{ApprovalBroker, RunGrants};
use crate::policy::SecurityPolicy;
use crate::provider::ProviderSet;
use crate::tools::{ToolContext, ToolRegistry};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use switchboard_config::Config;
use switchboard_core::ChatAddress;
use switchboard_store::Store;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

/// One user message for one agent session.
pub struct TurnRequest {
    pub agent: String,
    pub session_key: String,
    pub origin: Option<ChatAddress>,
    pub text: String,
    pub broker: Arc<dyn ApprovalBroker>,
    pub cancel: CancellationToken,
    pub events: Option<UnboundedSender<TurnEvent>>,
}

pub struct Runtime {
    config: Arc<Config>,
    store: Store,
    providers: Arc<ProviderSet>,
    policies: BTreeMap<String, Arc<SecurityPolicy>>,
    builtin: ToolRegistry,
}

impl Runtime {
    /// Build the runtime and create each agent's workspace
    /// (`<workspace_dir>/<agent>`).
    pub fn new(config: Arc<Config>, store: Store) -> std::io::Result<Self> {
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
            policies.insert(
                alias.clone(),
                Arc::new(SecurityPolicy::new(
                    &agent.risk_profile,
                    &profile,
                    workspace,
                    hourly,
                )),
            );
        }
        Ok(Self {
            config,
            store,
            providers,
            policies,
            builtin: ToolRegistry::builtin(),
        })
    }

    pub fn config(&self) -> &Arc<Config> {
        &self.config
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The tools `agent` is offered at top level (risk-profile filtered).
    pub fn tools_for(&self, agent: &str) -> ToolRegistry {
        match self.config.risk_profile_of(agent) {
            Some(p) => self.builtin.filtered(p),
            None => ToolRegistry::default(),
        }
    }

    /// The provider a session uses now: its `model_switch` choice or the agent's.
    pub async fn provider_of(&self, agent: &str, session_key: &str) -> Result<String, TurnError> {
        let cfg = self
            .config
            .agents
            .get(agent)
            .ok_or_else(|| TurnError::UnknownAgent(agent.into()))?;
        let switched = self
            .store
            .session(session_key)
            .await?
            .and_then(|s| s.model_override);
        Ok(switched
            .filter(|p| self.config.providers.contains_key(p))
            .unwrap_or_else(|| cfg.model_provider.clone()))
    }

    /// Run one turn of `request.agent` in `request.session_key`.
    pub async fn run_turn(&self, request: TurnRequest) -> Result<TurnReply, TurnError> {
        let agent_cfg = self
            .config
            .agents
            .get(&request.agent)
            .ok_or_else(|| TurnError::UnknownAgent(request.agent.clone()))?;
        if !agent_cfg.enabled {
            return Err(TurnError::DisabledAgent(request.agent.clone()));
        }
        let origin = request.origin.as_ref();
        self.store
            .ensure_session(
                &request.session_key,
                &request.agent,
                origin.map(|o| o.channel.as_str()),
                origin.map(|o| o.chat.as_str()),
                origin.and_then(|o| o.thread.as_deref()),
            )
            .await?;
        let provider = self
            .provider_of(&request.agent, &request.session_key)
            .await?;
        let chain = self.providers.chain_for(&provider)?;
        let policy = self.policies[&request.agent].clone();
        let mut memory_readers = vec![request.agent.clone()];
        memory_readers.extend(agent_cfg.workspace.read_memory_from.iter().cloned());
        let ctx = Arc::new(ToolContext {
            agent: request.agent.clone(),
            session_key: request.session_key.clone(),
            policy,
            store: self.store.clone(),
            memory_readers,
            providers: self.providers.names(),
            switch_to: Mutex::new(None),
            cancel: request.cancel.clone(),
        });
        let run = AgentRun {
            config: self.config.clone(),
            providers: self.providers.clone(),
            runtime_profile_name: agent_cfg.runtime_profile.clone(),
            profile: self.config.runtime_profile_of(&request.agent),
            system_prompt: agent_cfg.system_prompt.clone(),
            chain,
            temperature: None,
            registry: self.tools_for(&request.agent),
            ctx,
            broker: request.broker,
            grants: RunGrants::default(),
            caller_chain: Vec::new(),
            origin: request.origin,
            events: request.events,
            is_child: false,
        };
        run.run(&request.text).await
    }
}
