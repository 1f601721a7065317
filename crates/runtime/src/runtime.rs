//! The public face of the runtime: run one turn for a session.

use crate::agent::{TurnError, TurnEvent, TurnReply};
use crate::approval::ApprovalBroker;
use crate::core::{Core, RunParts};
use crate::rules::{AgentRules, Rules};
use crate::scope::{RunScope, TreeBudget};
use crate::tools::ToolRegistry;
use std::sync::Arc;
use switchboard_config::Config;
use switchboard_core::ChatAddress;
use switchboard_store::{Store, StoreError};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

/// One user message for one agent session.
pub struct TurnRequest {
    /// The agent.
    pub agent: String,
    /// The conversation.
    pub session_key: String,
    /// The chat the message came from.
    pub origin: Option<ChatAddress>,
    /// The person who wrote the message (`tg:1`, `cli:alice`, ...).
    pub sender: Option<String>,
    /// What the person wrote.
    pub text: String,
    /// Messages the same person sent just before `text` that joined this
    /// turn (merged bursts), oldest first: each is its own user message.
    pub earlier: Vec<String>,
    /// Who is asked for approvals.
    pub broker: Arc<dyn ApprovalBroker>,
    /// Stops the turn.
    pub cancel: CancellationToken,
    /// Where progress events go.
    pub events: Option<UnboundedSender<TurnEvent>>,
    /// The inbound message this turn answers (the gateway's inbox key):
    /// its transcript messages carry it, so after a crash `recover_turn`
    /// can tell what the interrupted turn had done.
    pub turn: Option<String>,
    /// Pictures sent with the message, shown to the model when the agent
    /// has `vision` (ignored otherwise; the text describes the files).
    pub images: Vec<crate::message::Image>,
    /// Messages of the same person that come before the model has written
    /// anything join this turn through here (see `agent::Join`).
    pub joins: Option<crate::agent::Joins>,
}

impl TurnRequest {
    /// `text` for `agent` in `session_key`, asking `broker` for approvals:
    /// from no chat and no one in particular, not stoppable from outside,
    /// without events, files or an inbox message (set those fields after).
    pub fn new(agent: &str, session_key: &str, text: &str, broker: Arc<dyn ApprovalBroker>) -> Self {
        Self {
            agent: agent.to_string(),
            session_key: session_key.to_string(),
            origin: None,
            sender: None,
            text: text.to_string(),
            earlier: Vec::new(),
            broker,
            cancel: CancellationToken::new(),
            events: None,
            turn: None,
            images: Vec::new(),
            joins: None,
        }
    }
}

/// The runtime: run turns for sessions.
#[derive(Clone)]
pub struct Runtime {
    core: Arc<Core>,
}

impl Runtime {
    /// Build the runtime and create each agent's workspace
    /// (`<workspace_dir>/<agent>`).
    pub fn new(config: Arc<Config>, store: Store) -> std::io::Result<Self> {
        Ok(Self {
            core: Core::new(config, store, crate::builtin::tools())?,
        })
    }

    /// The configuration now in force (a reload replaces it).
    pub fn config(&self) -> Arc<Config> {
        self.core.config()
    }

    /// The control plane.
    pub fn store(&self) -> &Store {
        &self.core.store
    }

    /// Its shared state.
    pub fn core(&self) -> &Arc<Core> {
        &self.core
    }

    /// Install the broker that carries prompts along `approval_route`s.
    pub fn set_route_broker(&self, broker: Arc<dyn ApprovalBroker>) {
        self.core.live.install_route_broker(broker);
    }

    /// Install what tells whether work is still this gateway's (`fence`).
    pub fn set_fence(&self, fence: Arc<dyn crate::fence::Fence>) {
        self.core.live.install_fence(fence);
    }

    /// Install what posts files into chats (`send_file`).
    pub fn set_file_poster(&self, poster: Arc<dyn crate::files::FilePoster>) {
        self.core.live.install_file_poster(poster);
    }

    /// The tools `agent` is offered at top level (risk-profile filtered):
    /// the built-ins and those of its MCP servers as last listed.
    pub fn tools_for(&self, agent: &str) -> ToolRegistry {
        let rules = self.core.rules();
        rules
            .agent(agent)
            .map_or_else(ToolRegistry::default, |a| self.tools_under(&rules, a))
    }

    /// [`Runtime::tools_for`] under `rules` (a turn's one snapshot: its
    /// configuration and the workspaces built from it).
    fn tools_under(&self, rules: &Rules, agent: &AgentRules) -> ToolRegistry {
        let Some(profile) = &agent.risk else {
            return ToolRegistry::default();
        };
        let tools = self
            .core
            .builtin
            .filtered(profile)
            .with_all(self.core.mcp.offered(&agent.config.mcp_servers, profile));
        let skill = profile
            .offers_tool("skill")
            .then(|| skills_under(rules, agent))
            .and_then(crate::tools::skill::SkillTool::over);
        match skill {
            Some(tool) => tools.with(Arc::new(tool)),
            None => tools,
        }
    }

    /// The skills `agent` has (docs/skills.md): read from its folders now,
    /// so a skill added or changed counts from the next turn on.
    pub fn skills_of(&self, agent: &str) -> crate::skills::Skills {
        let rules = self.core.rules();
        rules.agent(agent).map(|a| skills_under(&rules, a)).unwrap_or_default()
    }

    /// The tool specs the model sees in a top-level turn of `agent`: its
    /// tools bound to it (delegation names whom it can reach), none when
    /// its runtime profile is not agentic.
    pub fn offered_specs(&self, agent: &str) -> Vec<Arc<crate::message::ToolSpec>> {
        let rules = self.core.rules();
        let Some(a) = rules.agent(agent).filter(|a| a.runtime.agentic) else {
            return Vec::new();
        };
        rules.bind(self.tools_under(&rules, a), agent).specs()
    }

    /// What the tools `agent` is offered cost in each of its prompts, with
    /// the context window of provider `provider` (asked of its server once,
    /// where it says).
    pub async fn tool_cost(&self, agent: &str, provider: &str) -> crate::prompt_size::ToolCost {
        let specs = self.offered_specs(agent);
        let window = match self.core.rules().providers.chain_for(provider) {
            Ok(chain) => {
                let primary = chain.primary();
                primary.learn_window().await;
                primary.limits().window()
            }
            Err(_) => None,
        };
        crate::prompt_size::ToolCost::of(&specs, window)
    }

    /// The tools `agent` is offered, as `/tools` lists them.
    pub fn tool_rows(&self, agent: &str) -> Vec<crate::tools::ToolRow> {
        self.tools_for(agent).rows()
    }

    /// The MCP servers of `agent` that could not be used last, and why.
    pub fn mcp_unavailable(&self, agent: &str) -> Vec<(String, String)> {
        let config = &self.core.config();
        let Some(cfg) = config.agents.get(agent) else {
            return Vec::new();
        };
        self.core
            .mcp
            .servers
            .status()
            .into_iter()
            .filter(|(name, running, _)| !running && cfg.mcp_servers.contains(name))
            .filter_map(|(name, _, why)| Some((name, why?)))
            .collect()
    }

    /// Start the MCP servers `agent` uses that have not started yet (see
    /// `McpServers::ready`), so its tool list is known.
    pub async fn mcp_ready(&self, agent: &str) {
        if let Some(cfg) = self.core.config().agents.get(agent) {
            self.mcp_ready_for(cfg).await;
        }
    }

    async fn mcp_ready_for(&self, cfg: &switchboard_config::AgentConfig) {
        if !cfg.mcp_servers.is_empty() {
            self.core.mcp.servers.ready(&cfg.mcp_servers).await;
        }
    }

    /// Archive due child-session transcripts now; returns how many were
    /// archived (docs/delegation.md).
    pub async fn archive_due(&self) -> usize {
        crate::children::archive_due(&self.core).await
    }

    /// Archive due transcripts every 30 seconds until aborted.
    pub fn spawn_archiver(&self) -> tokio::task::JoinHandle<()> {
        crate::children::spawn_archiver(self.core.clone())
    }

    /// The provider a session uses now: its `model_switch` choice or the agent's.
    pub async fn provider_of(&self, agent: &str, session_key: &str) -> Result<String, TurnError> {
        let rules = self.core.rules();
        self.provider_under(&rules.config, agent_in(&rules, agent)?, session_key)
            .await
    }

    /// [`Runtime::provider_of`] under `config` (a turn's one snapshot).
    pub(crate) async fn provider_under(
        &self,
        config: &Config,
        agent: &AgentRules,
        session_key: &str,
    ) -> Result<String, TurnError> {
        let switched = self
            .core
            .store
            .sessions()
            .get(session_key)
            .await?
            .and_then(|s| s.model_override);
        Ok(switched
            .filter(|p| config.providers.contains_key(p))
            .unwrap_or_else(|| agent.config.model_provider.clone()))
    }

    /// Run one turn of `request.agent` in `request.session_key`: a
    /// top-level run (depth 0), the root of its execution tree.
    pub async fn run_turn(&self, request: TurnRequest) -> Result<TurnReply, TurnError> {
        // One snapshot of the configuration for the whole turn, and the
        // agent looked up in it once: a reload meanwhile cannot give it
        // one agent's provider and another's rules.
        let rules = self.core.rules();
        let agent = agent_in(&rules, &request.agent)?;
        if !agent.config.enabled {
            return Err(TurnError::DisabledAgent(request.agent.clone()));
        }
        // The session is created or touched with the user message's
        // write, while the first model call runs (`AgentRun::opens_session`).
        let (provider, ()) = tokio::join!(
            self.provider_under(&rules.config, agent, &request.session_key),
            self.mcp_ready_for(&agent.config)
        );
        let mut parts = self.parts_under(&rules, agent, &provider?, request.session_key, request.origin)?;
        parts.scope.requester = request.sender;
        let mut run = self.core.assemble(RunParts {
            broker: request.broker,
            events: request.events,
            cancel: request.cancel,
            ..parts
        });
        run.turn = request.turn;
        run.earlier = request.earlier;
        run.opens_session = true;
        *run.joins.lock() = request.joins;
        if agent.config.vision {
            run.images = request.images;
        }
        run.run(&request.text).await
    }

    /// After a crash: re-run or not the turn `turn` of `session_key` that
    /// was running (see `recover`).
    pub async fn recover_turn(&self, session_key: &str, turn: &str) -> Result<crate::recover::Recovery, StoreError> {
        crate::recover::recover_turn(&self.core.store, &self.core.builtin, session_key, turn).await
    }

    /// How many person messages the stored record of turn `turn` holds (0
    /// when it stored nothing): the messages that were answered together.
    pub async fn asked_in_turn(&self, session_key: &str, turn: &str) -> Result<usize, StoreError> {
        let stored = self.core.store.sessions().turn_messages(session_key, turn).await?;
        Ok(stored.iter().filter(|m| m.role == "user").count())
    }

    /// The parts of a top-level run of `agent` (cron) in `session_key`,
    /// on the provider it uses now, from one snapshot of the rules.
    pub(crate) async fn top_level_parts(
        &self,
        agent: &str,
        session_key: &str,
        origin: Option<ChatAddress>,
    ) -> Result<RunParts, TurnError> {
        let rules = self.core.rules();
        let agent = agent_in(&rules, agent)?;
        let provider = self.provider_under(&rules.config, agent, session_key).await?;
        self.parts_under(&rules, agent, &provider, session_key.to_string(), origin)
    }

    /// The parts of a top-level run of `agent` under `rules` (a turn's
    /// one snapshot) on `provider`.
    fn parts_under(
        &self,
        rules: &Arc<Rules>,
        agent: &Arc<AgentRules>,
        provider: &str,
        session_key: String,
        origin: Option<ChatAddress>,
    ) -> Result<RunParts, TurnError> {
        let chain = rules.providers.chain_for(provider)?;
        let base = Core::agent_parts(rules, agent, session_key, chain);
        let profile = &agent.runtime;
        Ok(RunParts {
            registry: self.tools_under(rules, agent),
            scope: RunScope {
                max_depth: profile.max_delegation_depth,
                max_spawn_depth: agent.config.subagents.max_spawn_depth,
                owner_chain: vec![agent.name.clone()],
                tree: profile
                    .max_execution_tree_iterations
                    .map(|n| Arc::new(TreeBudget::new(n))),
                is_tree_root: true,
                cost_chain: vec![agent.name.clone()],
                origin,
                ..RunScope::default()
            },
            ..base
        })
    }
}

/// Agent `name` in `rules`, or the error that says it is not configured.
fn agent_in<'r>(rules: &'r Rules, name: &str) -> Result<&'r Arc<AgentRules>, TurnError> {
    rules.agent(name).ok_or_else(|| TurnError::UnknownAgent(name.into()))
}

/// `agent`'s skills under `rules` (its folders in the workspace those
/// rules built, and the shared ones they name).
fn skills_under(rules: &Rules, agent: &AgentRules) -> crate::skills::Skills {
    crate::skills::scan(&crate::skills::roots(
        &rules.config,
        &agent.config,
        &agent.policy.workspace,
    ))
}
