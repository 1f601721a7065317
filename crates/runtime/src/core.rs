//! The shared heart of the runtime: configuration, store, providers,
//! per-agent policies, the built-in tools, running background tasks, and
//! the assembly of an [`AgentRun`] from its parts. Tools that start child
//! runs (`spawn_subagent`, `delegate`) reach it through their context.

use crate::agent::{AgentRun, TurnEvent};
use crate::approval::{ApprovalBroker, NoApprover, RunGrants};
use crate::policy::SecurityPolicy;
use crate::provider::{ProviderChain, ProviderSet};
use crate::scope::RunScope;
use crate::tools::{ToolContext, ToolRegistry};
use parking_lot::{Mutex, RwLock};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use switchboard_config::{Config, RiskProfile, RuntimeProfile};
use switchboard_store::Store;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

pub struct Core {
    pub(crate) config: Arc<Config>,
    pub(crate) store: Store,
    pub(crate) providers: Arc<ProviderSet>,
    pub(crate) policies: BTreeMap<String, Arc<SecurityPolicy>>,
    pub(crate) builtin: ToolRegistry,
    /// Cancellation handles of running child runs (foreground and
    /// background), by run id.
    pub(crate) tasks: Arc<Mutex<HashMap<String, CancellationToken>>>,
    /// Delivers approval prompts along a risk profile's `approval_route`
    /// (installed by the gateway once channels run).
    pub(crate) route_broker: RwLock<Option<Arc<dyn ApprovalBroker>>>,
    /// `/subagents pause`: new spawns and delegations are refused.
    paused: AtomicBool,
    /// The global `subagent` lane: at most `max_concurrent` session children
    /// run at once; the rest wait for a permit.
    pub(crate) lane: Arc<tokio::sync::Semaphore>,
    /// Announcements waiting for a running parent loop, by session key.
    pub(crate) inbox: Mutex<HashMap<String, Vec<String>>>,
    /// Writes `delegate_results/*.json` one after another.
    pub(crate) artifacts: crate::artifacts::ArtifactWriter,
    /// `delegate` bound to an identity (and whether the run may only
    /// delegate), built once: it depends only on the configuration.
    pub(crate) delegate_tools: Mutex<HashMap<(String, bool), crate::tools::BoundTool>>,
    /// One spawn at a time per session, from counting its active children
    /// to recording the new one, so parallel calls cannot overshoot
    /// `max_children_per_agent`.
    spawning: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

/// Everything that differs between one run and another.
#[derive(Clone)]
pub struct RunParts {
    pub agent: String,
    pub session_key: String,
    pub policy: Arc<SecurityPolicy>,
    /// The risk profile whose approval rules gate tool calls (a bounded
    /// child keeps the caller's command policy but the target's rules).
    pub approval_profile: (String, RiskProfile),
    pub registry: ToolRegistry,
    pub chain: ProviderChain,
    pub temperature: Option<f64>,
    pub runtime_profile_name: String,
    pub profile: RuntimeProfile,
    pub system_prompt: String,
    pub broker: Arc<dyn ApprovalBroker>,
    pub events: Option<UnboundedSender<TurnEvent>>,
    pub cancel: CancellationToken,
    pub scope: RunScope,
    pub memory_readers: Vec<String>,
}

/// Held while a session's spawn is checked and recorded.
pub struct SpawnTurn {
    _guard: tokio::sync::OwnedMutexGuard<()>,
}

pub const PAUSED: &str = "Delegation spawning is paused. Resume it with /subagents resume before retrying.";

impl Core {
    /// Where the gateway keeps an agent's records on disk (background
    /// results, child transcripts): `<workspace_dir>/.records/<agent>/`,
    /// beside the agent's workspace and so out of its tools' reach — a
    /// `file_read` or `grep -r` in one chat cannot read what another chat's
    /// children produced. (Agent aliases cannot start with a dot.)
    pub fn records_dir(&self, agent: &str) -> PathBuf {
        PathBuf::from(&self.config.workspace_dir).join(".records").join(agent)
    }

    /// Wait for this session's turn to spawn a child (see `spawning`).
    pub async fn spawn_turn(&self, session_key: &str) -> SpawnTurn {
        let lock = {
            let mut map = self.spawning.lock();
            // Forget sessions nobody is spawning in.
            map.retain(|_, l| Arc::strong_count(l) > 1);
            map.entry(session_key.to_string()).or_default().clone()
        };
        SpawnTurn {
            _guard: lock.lock_owned().await,
        }
    }

    pub fn new(config: Arc<Config>, store: Store) -> std::io::Result<Self> {
        let providers = Arc::new(ProviderSet::from_config(&config));
        let lane = Arc::new(tokio::sync::Semaphore::new(
            config.lanes.subagent.max_concurrent as usize,
        ));
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
                Arc::new(SecurityPolicy::new(&agent.risk_profile, &profile, workspace, hourly)),
            );
        }
        Ok(Self {
            config,
            store,
            providers,
            policies,
            builtin: ToolRegistry::builtin(),
            tasks: Arc::new(Mutex::new(HashMap::new())),
            route_broker: RwLock::new(None),
            paused: AtomicBool::new(false),
            lane,
            inbox: Mutex::new(HashMap::new()),
            delegate_tools: Mutex::new(HashMap::new()),
            spawning: Mutex::new(HashMap::new()),
            artifacts: crate::artifacts::ArtifactWriter::start(),
        })
    }

    /// Register a running child's cancel handle until the guard drops.
    pub fn register_run(&self, run_id: &str, cancel: &CancellationToken) -> RunRegistration {
        self.tasks.lock().insert(run_id.to_string(), cancel.clone());
        RunRegistration {
            tasks: self.tasks.clone(),
            run_id: run_id.to_string(),
        }
    }

    /// Cancel a running child by id; false when it is not running here.
    pub fn cancel_run(&self, run_id: &str) -> bool {
        let token = self.tasks.lock().get(run_id).cloned();
        token.map(|t| t.cancel()).is_some()
    }

    /// Leave a message for the running loop of `session_key`.
    pub fn post_to_inbox(&self, session_key: &str, text: String) {
        self.inbox.lock().entry(session_key.to_string()).or_default().push(text);
    }

    /// Messages waiting for `session_key`'s loop.
    pub fn take_inbox(&self, session_key: &str) -> Vec<String> {
        self.inbox.lock().remove(session_key).unwrap_or_default()
    }

    pub fn is_paused(&self) -> bool {
        self.paused.load(Ordering::SeqCst)
    }

    /// Refuse (or allow again) new spawns and delegations; running
    /// children continue either way.
    pub fn set_paused(&self, paused: bool) {
        self.paused.store(paused, Ordering::SeqCst);
    }

    /// The broker for a run with this approval profile: the route broker
    /// when the route is complete and installed, else nobody.
    pub fn route_broker_for(&self, profile: &RiskProfile) -> Arc<dyn ApprovalBroker> {
        let complete = profile
            .approval_route
            .as_ref()
            .is_some_and(switchboard_config::ApprovalRoute::is_complete);
        let installed = self.route_broker.read().clone();
        match (complete, installed) {
            (true, Some(b)) => b,
            (true, None) => Arc::new(NoApprover("the approver channel is not running".into())),
            (false, _) => Arc::new(NoApprover("no complete approval_route is configured".into())),
        }
    }

    /// Build the run: bind the per-identity `delegate` tool and the context.
    pub fn assemble(self: &Arc<Self>, parts: RunParts) -> AgentRun {
        let registry = crate::delegation::bind_delegate_tool(self, &parts.agent, parts.registry, &parts.scope);
        let ctx = Arc::new(ToolContext {
            agent: parts.agent.clone(),
            session_key: parts.session_key,
            policy: parts.policy,
            store: self.store.clone(),
            memory_readers: parts.memory_readers,
            providers: self.providers.names(),
            switch_to: Mutex::new(None),
            cancel: parts.cancel,
            core: self.clone(),
            scope: parts.scope,
            ceiling: registry.clone(),
            chain: parts.chain.clone(),
            temperature: parts.temperature,
        });
        AgentRun {
            config: self.config.clone(),
            providers: self.providers.clone(),
            runtime_profile_name: parts.runtime_profile_name,
            profile: parts.profile,
            system_prompt: parts.system_prompt,
            chain: parts.chain,
            temperature: parts.temperature,
            registry,
            ctx,
            broker: parts.broker,
            grants: RunGrants::default(),
            approval_profile: parts.approval_profile,
            events: parts.events,
            turn: None,
        }
    }
}

/// Removes a run's cancel handle from the registry when dropped.
pub struct RunRegistration {
    tasks: Arc<Mutex<HashMap<String, CancellationToken>>>,
    run_id: String,
}

impl Drop for RunRegistration {
    fn drop(&mut self) {
        self.tasks.lock().remove(&self.run_id);
    }
}
