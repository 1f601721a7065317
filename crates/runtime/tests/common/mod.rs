//! Shared setup for runtime tests: a config pointing at scripted models, a
//! temporary database and workspace, and a recording approval broker.

#![allow(dead_code)]

use async_trait::async_trait;
use std::sync::{Arc, Mutex};
use switchboard_config::Config;
use switchboard_runtime::{
    ApprovalBroker, ApprovalOutcome, ApprovalRequest, Runtime, TurnError, TurnReply, TurnRequest,
};
use switchboard_store::Store;
pub(crate) use switchboard_test_support::tool_results;
use tokio_util::sync::CancellationToken;

pub(crate) struct Harness {
    pub dir: tempfile::TempDir,
    pub runtime: Runtime,
}

pub(crate) async fn harness(toml: &str) -> Harness {
    harness_with(toml, |_| {}).await
}

/// A harness whose validated config is changed by `mutate` first (to build
/// states validation would refuse, like a dangling risk profile).
pub(crate) async fn harness_with(toml: &str, mutate: impl FnOnce(&mut Config)) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "database_url = \"sqlite://{d}/cp.db\"\nworkspace_dir = \"{d}/ws\"\n{toml}",
        d = dir.path().display()
    );
    let mut config = Config::from_toml_str(&text, "test").unwrap_or_else(|e| panic!("{e}"));
    mutate(&mut config);
    let store = Store::open(&config.database_url).await.unwrap();
    let runtime = Runtime::new(Arc::new(config), store).unwrap();
    Harness { dir, runtime }
}

impl Harness {
    pub(crate) fn workspace(&self, agent: &str) -> std::path::PathBuf {
        self.dir.path().join("ws").join(agent)
    }

    /// The agent's records folder (results, transcripts), beside its workspace.
    pub(crate) fn records(&self, agent: &str) -> std::path::PathBuf {
        self.dir.path().join("ws").join(".records").join(agent)
    }

    pub(crate) async fn turn(&self, text: &str, broker: Arc<dyn ApprovalBroker>) -> Result<TurnReply, TurnError> {
        self.turn_with(text, broker, CancellationToken::new()).await
    }

    pub(crate) async fn turn_with(
        &self,
        text: &str,
        broker: Arc<dyn ApprovalBroker>,
        cancel: CancellationToken,
    ) -> Result<TurnReply, TurnError> {
        self.turn_told(text, broker, cancel, None).await
    }

    /// A turn of `main` whose progress (streamed text included) goes to `events`.
    pub(crate) async fn turn_told(
        &self,
        text: &str,
        broker: Arc<dyn ApprovalBroker>,
        cancel: CancellationToken,
        events: Option<tokio::sync::mpsc::UnboundedSender<switchboard_runtime::TurnEvent>>,
    ) -> Result<TurnReply, TurnError> {
        self.runtime
            .run_turn(TurnRequest {
                cancel,
                events,
                ..TurnRequest::new("main", "agent:main:cli:local", text, broker)
            })
            .await
    }
}

/// Answers every request with a fixed outcome and records the requests.
pub(crate) struct FixedBroker {
    pub outcome: ApprovalOutcome,
    pub seen: Mutex<Vec<ApprovalRequest>>,
}

impl FixedBroker {
    pub(crate) fn new(outcome: ApprovalOutcome) -> Arc<Self> {
        Arc::new(Self {
            outcome,
            seen: Mutex::new(Vec::new()),
        })
    }
    /// Allows every request, as `by`, once or for the rest of the run.
    pub(crate) fn approving(by: &str, always: bool) -> Arc<Self> {
        Self::new(ApprovalOutcome::Approved { by: by.into(), always })
    }
    pub(crate) fn count(&self) -> usize {
        self.seen.lock().unwrap().len()
    }
}

#[async_trait]
impl ApprovalBroker for FixedBroker {
    async fn request(&self, request: ApprovalRequest) -> ApprovalOutcome {
        self.seen.lock().unwrap().push(request);
        self.outcome.clone()
    }
}

pub(crate) fn provider(name: &str, url: &str, extra: &str) -> String {
    format!(
        "[providers.{name}]\nkind = \"openai\"\nbase_url = \"{url}\"\nmodel = \"{name}-model\"\nmax_retries = 0\n{extra}\n"
    )
}

/// Agent `main` on provider `primary` at `primary`, which falls back to
/// `backup` at `backup`; then `rest`.
pub(crate) fn with_fallback(primary: &str, backup: &str, rest: &str) -> String {
    format!(
        "{}{}[agents.main]\nmodel_provider = \"primary\"\n{rest}",
        provider("primary", primary, "fallbacks = [\"backup\"]"),
        provider("backup", backup, "")
    )
}

/// Provider `primary` at `url` and agent `main` on it, then `rest`
/// (a risk profile, more agents).
pub(crate) fn main_on(url: &str, rest: &str) -> String {
    format!(
        "{}[agents.main]\nmodel_provider = \"primary\"\n{rest}",
        provider("primary", url, "")
    )
}

/// The last tool result the model was shown.
pub(crate) fn last_tool_result(model: &switchboard_test_support::ScriptedModel) -> String {
    let reqs = model.requests();
    let last = reqs.last().expect("a request");
    tool_results(last).pop().expect("a tool result")
}

/// Agent `main` on provider `primary`, supervised, with the plain tools
/// auto-approved (the tool-loop suites).
pub(crate) const PROFILE: &str = r#"
[agents.main]
model_provider = "primary"
system_prompt = "You are terse."

[risk_profiles.default]
level = "supervised"
auto_approve = ["file_read", "file_write", "memory_store", "memory_recall", "shell"]
allowed_commands = ["ls", "echo", "cat"]
excluded_tools = ["model_switch"]
"#;
