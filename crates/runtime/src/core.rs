//! The shared heart of the runtime: configuration, store, providers,
//! per-agent policies, the built-in tools, running background tasks, and
//! the assembly of an [`AgentRun`] from its parts. A run's context holds
//! it: the tools that start child runs (`spawn_subagent`, `delegate`,
//! `sessions_spawn`) use it whole, the others the narrower [`RunHost`].

use crate::agent::{AgentRun, TurnEvent};
use crate::approval::{ApprovalBroker, NoApprover, RunGrants};
use crate::live::Live;
use crate::policy::SecurityPolicy;
use crate::provider::ProviderChain;
use crate::rules::{AgentRules, Rules};
use crate::scope::RunScope;
use crate::tools::{RunHost, ToolContext, ToolRegistry, ToolResult};
use parking_lot::Mutex;
use std::path::PathBuf;
use std::sync::Arc;
use switchboard_config::{Config, RiskProfile};
use switchboard_store::Store;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

/// The runtime's shared state: what is fixed at start (configuration,
/// store, providers, per-agent policies, built-in tools, the bound
/// `delegate` tools derived from them) and the live registry (`live`).
/// Other crates go through its operations, not its fields.
pub struct Core {
    /// The configuration and what is built from it (replaced by a reload).
    rules: parking_lot::RwLock<Arc<Rules>>,
    pub(crate) store: Store,
    pub(crate) builtin: ToolRegistry,
    /// What changes while the gateway runs (see `live`).
    pub(crate) live: Live,
    /// Writes `delegate_results/*.json` one after another.
    pub(crate) artifacts: crate::artifacts::ArtifactWriter,
    /// Kernel confinement of commands and file tools.
    pub(crate) sandbox: switchboard_sandbox::Sandbox,
    /// MCP tool servers and their tools (docs/mcp.md).
    pub(crate) mcp: crate::tools::McpTools,
}

/// Everything that differs between one run and another.
#[derive(Clone)]
pub(crate) struct RunParts {
    /// The configuration and what is built from it, as the run was
    /// planned: the whole run keeps them, whatever a reload does meanwhile.
    pub rules: Arc<Rules>,
    /// The agent the run acts as, as `rules` make it.
    pub agent: Arc<AgentRules>,
    /// Its session.
    pub session_key: String,
    /// Its command and path policy.
    pub policy: Arc<SecurityPolicy>,
    /// The risk profile whose approval rules gate tool calls (a bounded
    /// child keeps the caller's command policy but the target's rules).
    pub approval_profile: (String, RiskProfile),
    /// The tools offered.
    pub registry: ToolRegistry,
    /// The providers to call.
    pub chain: ProviderChain,
    /// Sampling temperature, when set.
    pub temperature: Option<f64>,
    /// The system message.
    pub system_prompt: String,
    /// Who is asked for approvals.
    pub broker: Arc<dyn ApprovalBroker>,
    /// Where progress events go.
    pub events: Option<UnboundedSender<TurnEvent>>,
    /// Stops the run.
    pub cancel: CancellationToken,
    /// Where the run sits in its tree.
    pub scope: RunScope,
    /// Agents whose memory the run may read.
    pub memory_readers: Vec<String>,
}

/// `let core = runtime_of!(ctx);` in a tool that starts or steers child
/// runs: the runtime, or return the failure (see [`Core::of`]).
macro_rules! runtime_of {
    ($ctx:expr) => {
        match $crate::core::Core::of($ctx) {
            Ok(core) => core,
            Err(failure) => return failure,
        }
    };
}
pub(crate) use runtime_of;

/// The refusal while `/subagents pause` holds.
pub const PAUSED: &str = "Delegation spawning is paused. Resume it with /subagents resume before retrying.";

impl Core {
    /// The refusal of a new child run while `/subagents pause` holds for
    /// the run's agent or the root of its tree.
    pub(crate) fn spawning_paused(&self, ctx: &ToolContext) -> Option<ToolResult> {
        let paused = self.live.is_paused(&ctx.root_agent()) || self.live.is_paused(&ctx.agent);
        paused.then(|| ToolResult::fail(PAUSED))
    }

    /// The runtime a run's tools work in (see [`RunHost::runtime`]).
    pub(crate) fn of(ctx: &ToolContext) -> Result<Arc<Self>, ToolResult> {
        ctx.host
            .clone()
            .runtime()
            .downcast::<Self>()
            .map_err(|_| ToolResult::fail("this run has no runtime to start or steer child runs in"))
    }

    /// Where the gateway keeps an agent's records on disk (background
    /// results, child transcripts): `<workspace_dir>/.records/<agent>/`,
    /// beside the agent's workspace and so out of its tools' reach — a
    /// `file_read` or `grep -r` in one chat cannot read what another chat's
    /// children produced. (Agent aliases cannot start with a dot.)
    pub fn records_dir(&self, agent: &str) -> PathBuf {
        PathBuf::from(&self.config().workspace_dir).join(".records").join(agent)
    }

    /// An agent's workspace (created at start or reload, canonical), where
    /// its tools work and files people send it are saved.
    pub fn workspace(&self, agent: &str) -> Option<PathBuf> {
        self.rules().agent(agent).map(|a| a.policy.workspace.clone())
    }

    /// The configuration now in force.
    pub fn config(&self) -> Arc<Config> {
        self.rules.read().config.clone()
    }

    /// The configuration and what is built from it, now.
    pub(crate) fn rules(&self) -> Arc<Rules> {
        self.rules.read().clone()
    }

    /// Put `config` in force for everything that starts from now on
    /// (creating new agents' workspaces); what runs keeps its rules.
    pub fn apply(&self, config: Arc<Config>) -> std::io::Result<()> {
        let rules = Arc::new(Rules::build(config, Some(&self.rules()))?);
        *self.rules.write() = rules;
        Ok(())
    }

    /// Build it, creating each agent's workspace; `builtin` is every
    /// built-in tool.
    pub fn new(config: Arc<Config>, store: Store, builtin: ToolRegistry) -> std::io::Result<Arc<Self>> {
        let rules = Rules::build(config.clone(), None)?;
        let live = Live::new(config.lanes.subagent.max_concurrent as usize);
        let sandbox = crate::confinement::sandbox_of(&config.sandbox);
        let mcp = switchboard_mcp::McpServers::new(
            &config.mcp_servers,
            std::path::Path::new(&config.workspace_dir),
            &sandbox,
        );
        Ok(Arc::new(Self {
            rules: parking_lot::RwLock::new(Arc::new(rules)),
            store,
            builtin,
            live,
            artifacts: crate::artifacts::ArtifactWriter::start(),
            sandbox,
            mcp: crate::tools::McpTools::new(mcp),
        }))
    }

    /// The MCP tool servers (docs/mcp.md).
    pub fn mcp(&self) -> &switchboard_mcp::McpServers {
        &self.mcp.servers
    }

    /// Kernel confinement of commands and file tools (docs/security.md).
    pub fn sandbox(&self) -> &switchboard_sandbox::Sandbox {
        &self.sandbox
    }

    /// The live registry: running children, pause, lanes, notes for running loops.
    pub fn live(&self) -> &Live {
        &self.live
    }

    /// The parts of a run as `agent`, in `session_key`, on `chain`, from
    /// its configuration alone: its policy, risk and runtime profiles,
    /// system prompt and memory readers; no tools, no operator, a fresh
    /// cancellation and a default scope. Each kind of run changes what it
    /// needs (`RunParts { registry, scope, ..Core::agent_parts(..) }`).
    /// `agent` is one of `rules`' agents.
    pub(crate) fn agent_parts(
        rules: &Arc<Rules>,
        agent: &Arc<AgentRules>,
        session_key: String,
        chain: ProviderChain,
    ) -> RunParts {
        let cfg = &agent.config;
        let mut memory_readers = vec![agent.name.clone()];
        memory_readers.extend(cfg.workspace.read_memory_from.iter().cloned());
        RunParts {
            rules: rules.clone(),
            agent: agent.clone(),
            session_key,
            policy: agent.policy.clone(),
            approval_profile: (cfg.risk_profile.clone(), agent.risk_or_default()),
            registry: ToolRegistry::default(),
            chain,
            temperature: None,
            system_prompt: cfg.system_prompt.clone(),
            broker: Arc::new(NoApprover("no approver for this run".into())),
            events: None,
            cancel: CancellationToken::new(),
            scope: RunScope::default(),
            memory_readers,
        }
    }

    /// The broker for a run with this approval profile: the route broker
    /// when the route is complete and installed, else nobody.
    pub fn route_broker_for(&self, profile: &RiskProfile) -> Arc<dyn ApprovalBroker> {
        let complete = profile
            .approval_route
            .as_ref()
            .is_some_and(switchboard_config::ApprovalRoute::is_complete);
        let installed = self.live.route_broker();
        match (complete, installed) {
            (true, Some(b)) => b,
            (true, None) => Arc::new(NoApprover("the approver channel is not running".into())),
            (false, _) => Arc::new(NoApprover("no complete approval_route is configured".into())),
        }
    }

    /// Build the run under the rules its parts were planned with: bind
    /// its `delegate` tool to its agent, and the context.
    pub(crate) fn assemble(self: &Arc<Self>, mut parts: RunParts) -> AgentRun {
        // Every registry run reports progress (the console shows it).
        if let (Some(run_id), None) = (&parts.scope.run_id, &parts.scope.progress) {
            let budget = parts.scope.deadline.map_or(0, |d| {
                d.saturating_duration_since(tokio::time::Instant::now()).as_secs()
            });
            parts.scope.progress = Some(Arc::new(crate::progress::ProgressRecorder::new(
                run_id,
                self.store.clone(),
                budget,
            )));
        }
        let rules = parts.rules;
        let registry = rules.bind(parts.registry, &parts.agent.name);
        let ctx = Arc::new(ToolContext {
            agent: parts.agent.name.clone(),
            session_key: parts.session_key,
            policy: parts.policy,
            store: self.store.clone(),
            memory_readers: parts.memory_readers,
            providers: rules.providers.names(),
            switch_to: Mutex::new(None),
            cancel: parts.cancel,
            host: self.clone(),
            scope: parts.scope,
            ceiling: registry.clone(),
            chain: parts.chain.clone(),
            temperature: parts.temperature,
            pictures: Mutex::new(Vec::new()),
        });
        AgentRun {
            agent: parts.agent,
            config: rules.config.clone(),
            providers: rules.providers.clone(),
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
            images: Vec::new(),
            earlier: Vec::new(),
            opens_session: false,
            joins: Default::default(),
        }
    }
}

/// What a run's tools and loop reach of the runtime (see [`RunHost`]).
impl RunHost for Core {
    fn sandbox(&self) -> &switchboard_sandbox::Sandbox {
        &self.sandbox
    }

    fn file_poster(&self) -> Option<Arc<dyn crate::files::FilePoster>> {
        self.live.file_poster()
    }

    fn fence(&self) -> Option<Arc<dyn crate::fence::Fence>> {
        self.live.fence()
    }

    fn leave_note(&self, session_key: &str, text: String) {
        self.live.leave_note(session_key, text);
    }

    fn take_notes(&self, session_key: &str) -> Vec<String> {
        self.live.take_notes(session_key)
    }

    fn runtime(self: Arc<Self>) -> Arc<dyn std::any::Any + Send + Sync> {
        self
    }

    fn tell_operators(&self, agent: &str, subject: &str, text: String) {
        if !self.live.first_telling(agent, subject) {
            return;
        }
        tracing::warn!(agent, "{text}");
        let config = self.rules().config.clone();
        let route = config
            .risk_profile_of(agent)
            .and_then(|p| p.approval_route.clone())
            .filter(switchboard_config::ApprovalRoute::is_complete);
        if let (Some(route), Some(broker)) = (route, self.live.route_broker()) {
            tokio::spawn(async move { broker.tell(&route, &text).await });
        }
    }
}
