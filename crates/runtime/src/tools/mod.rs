//! Built-in tools, one per file, and the registry the agent loop offers.

mod file_read;
mod file_write;
mod host;
mod manifest;
mod mcp;
mod mcp_images;
mod memory_recall;
mod memory_store;
mod model_switch;
mod registry;
mod send_file;
mod shell;
pub(crate) mod skill;

pub use host::RunHost;
pub(crate) use mcp::McpTools;
pub use registry::{BoundTool, ToolRegistry, ToolRisk, ToolRow};

use crate::policy::{Risk, SecurityPolicy};
use async_trait::async_trait;
use parking_lot::Mutex;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::sync::Arc;
use switchboard_store::Store;
use tokio_util::sync::CancellationToken;

/// The result of one tool call. Failures are values, never panics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResult {
    /// Whether it worked.
    pub success: bool,
    /// What it produced.
    pub output: String,
    /// What went wrong.
    pub error: Option<String>,
}

impl ToolResult {
    /// A success.
    pub fn ok(output: impl Into<String>) -> Self {
        Self {
            success: true,
            output: output.into(),
            error: None,
        }
    }

    /// A failure.
    pub fn fail(error: impl Into<String>) -> Self {
        Self {
            success: false,
            output: String::new(),
            error: Some(error.into()),
        }
    }

    /// The text the model sees.
    pub fn to_model_text(&self) -> String {
        match (&self.error, self.output.is_empty()) {
            (None, _) => self.output.clone(),
            (Some(e), true) => format!("Error: {e}"),
            (Some(e), false) => format!("Error: {e}\n{}", self.output),
        }
    }
}

/// What a tool may use while it runs.
pub struct ToolContext {
    /// The agent whose identity the run has (memory writes are attributed to it).
    pub agent: String,
    /// The run's session.
    pub session_key: String,
    /// Its command and path policy.
    pub policy: Arc<SecurityPolicy>,
    /// The control plane.
    pub store: Store,
    /// Agents whose memory rows this run may read (its own first).
    pub memory_readers: Vec<String>,
    /// Configured provider names, for `model_switch`.
    pub providers: Vec<String>,
    /// Set by `model_switch`; the loop uses it from the next model call on.
    pub switch_to: Mutex<Option<String>>,
    /// Stops the run (tools honour it).
    pub cancel: CancellationToken,
    /// What the run may reach of the runtime (sandbox, file poster, fence,
    /// notes); the tools that start or steer child runs get the runtime
    /// itself from it (`Core::of`).
    pub host: Arc<dyn RunHost>,
    /// Where this run sits in its tree.
    pub scope: crate::scope::RunScope,
    /// This run's own registry: the ceiling for bounded children.
    pub ceiling: ToolRegistry,
    /// The provider chain and temperature a same-identity child inherits.
    pub chain: crate::provider::ProviderChain,
    /// Sampling temperature a same-identity child inherits.
    pub temperature: Option<f64>,
    /// Pictures tools returned since the last model call (MCP results):
    /// shown to an agent with `vision` at the next one.
    pub pictures: Mutex<Vec<crate::message::Image>>,
}

/// A tool the model can call.
#[async_trait]
pub trait Tool: Send + Sync {
    /// Its name.
    fn name(&self) -> &'static str;
    /// What it does, for the model (built-ins: from the manifest).
    fn description(&self) -> String {
        manifest::entry(self.name())
            .map(|e| e.description.clone())
            .unwrap_or_default()
    }
    /// JSON Schema of the arguments object (built-ins: from the manifest).
    fn parameters(&self) -> Value {
        manifest_parameters(self.name())
    }
    /// What a call with these (already parsed) arguments would do
    /// (built-ins: from the manifest; a tool missing there counts as high risk).
    fn effect(&self, _args: &Value) -> Risk {
        manifest::entry(self.name()).map_or(crate::policy::Risk::High, manifest::Entry::effect)
    }
    /// The name the model calls it by (built-ins: [`Tool::name`]; MCP
    /// tools: a name every provider accepts).
    fn model_name(&self) -> &str {
        self.name()
    }
    /// For a tool offered briefly (name and one-line description), the
    /// full description and schema the model gets once it has called it.
    fn full_spec(&self) -> Option<(String, Value)> {
        None
    }
    /// Whether the approval gate weighs its risk like a command's (MCP
    /// tools: an auto-approved tool is still asked for when high risk).
    fn risk_rated(&self) -> bool {
        false
    }
    /// The risk `/tools` shows (built-ins: the manifest's; a tool missing
    /// from it: high).
    fn declared_risk(&self) -> ToolRisk {
        manifest::entry(self.name()).map_or(ToolRisk::Fixed(Risk::High), manifest::Entry::declared)
    }
    /// Its `tool` label in metrics: a name the configuration bounds
    /// (built-ins: their name; MCP tools: `mcp:<server>`, since a server
    /// may announce any number of names over time).
    fn metric_label(&self) -> String {
        self.name().to_string()
    }
    /// Where it comes from, for `/tools`.
    fn source(&self) -> String {
        "built in".into()
    }
    /// Run it.
    async fn execute(&self, args: Value, ctx: &ToolContext) -> ToolResult;
}

/// The argument schema the manifest gives the built-in tool `name` (an
/// empty object schema for a tool it does not list).
pub(crate) fn manifest_parameters(name: &str) -> Value {
    manifest::entry(name)
        .map(|e| e.parameters.clone())
        .unwrap_or_else(|| serde_json::json!({"type": "object", "properties": {}}))
}

/// `let args: Args = tool_args!(self, args);` in a tool's `execute`: the
/// parsed arguments, or return what to send instead (see `parse_args`).
macro_rules! tool_args {
    ($tool:expr, $args:expr) => {
        match $crate::tools::parse_args($tool.name(), $args) {
            Ok(a) => a,
            Err(e) => return e,
        }
    };
}
pub(crate) use tool_args;

/// `builtin_tool!(Type, "name", Args)`: implements [`Tool`] for a built-in
/// whose description, schema and effect are in the manifest. The type's own
/// `async fn run(&self, args: Args, ctx: &ToolContext) -> ToolResult` does
/// the work once the arguments have parsed; without `Args` (a tool that takes none),
/// `run(&self, _: IgnoredAny, ctx)`.
macro_rules! builtin_tool {
    ($ty:ty, $name:literal, $args:ty) => {
        #[async_trait::async_trait]
        impl $crate::tools::Tool for $ty {
            fn name(&self) -> &'static str {
                $name
            }
            async fn execute(
                &self,
                args: serde_json::Value,
                ctx: &$crate::tools::ToolContext,
            ) -> $crate::tools::ToolResult {
                let args: $args = $crate::tools::tool_args!(self, args);
                self.run(args, ctx).await
            }
        }
    };
    ($ty:ty, $name:literal) => {
        $crate::tools::builtin_tool!($ty, $name, serde::de::IgnoredAny);
    };
}
pub(crate) use builtin_tool;

impl ToolContext {
    /// The agent at the root of this run's tree (the one a person talks
    /// to): the first of the caller chain, or this run's own agent.
    pub(crate) fn root_agent(&self) -> String {
        self.scope
            .owner_chain
            .first()
            .cloned()
            .unwrap_or_else(|| self.agent.clone())
    }

    /// Run `work` on a thread the kernel confines to this run's workspace
    /// (docs/security.md).
    pub(crate) async fn confined<T, F>(&self, access: switchboard_sandbox::fs::Access, work: F) -> std::io::Result<T>
    where
        T: Send + 'static,
        F: FnOnce() -> std::io::Result<T> + Send + 'static,
    {
        switchboard_sandbox::fs::confined(&self.policy.workspace, access, work).await
    }

    /// `path` inside this run's workspace, or the refusal to return.
    pub(crate) fn in_workspace(&self, path: &str) -> Result<std::path::PathBuf, ToolResult> {
        let p = &self.policy;
        crate::policy::resolve_in_workspace(&p.workspace, path, &p.forbidden_paths).map_err(|e| {
            switchboard_telemetry::metrics::sandbox_refusal("path");
            ToolResult::fail(e.to_string())
        })
    }
}

/// Parse a tool's arguments, or explain what to send instead.
pub(crate) fn parse_args<T: DeserializeOwned>(tool: &str, args: Value) -> Result<T, ToolResult> {
    serde_json::from_value(args).map_err(|e| {
        ToolResult::fail(format!(
            "invalid arguments for {tool}: {e}; send a JSON object matching the tool's schema"
        ))
    })
}
