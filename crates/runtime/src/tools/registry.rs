//! The set of tools one run may offer.

use super::Tool;
use crate::message::ToolSpec;
use std::sync::Arc;
use switchboard_config::RiskProfile;

/// A tool with its spec, built once and shared by every registry, run and
/// request that offers it.
#[derive(Clone)]
pub struct BoundTool {
    tool: Arc<dyn Tool>,
    spec: Arc<ToolSpec>,
    /// The whole spec of a tool offered briefly until called.
    full: Option<Arc<ToolSpec>>,
}

impl BoundTool {
    /// The tool's name.
    pub fn name(&self) -> &'static str {
        self.tool.name()
    }

    /// Bind `tool` with its spec built once, its schema being `parameters`
    /// rather than its own (a tool whose arguments depend on who is offered it).
    pub fn with_parameters(tool: Arc<dyn Tool>, parameters: &serde_json::Value) -> Self {
        let spec = Arc::new(ToolSpec::new(tool.model_name(), tool.description(), parameters));
        Self { tool, spec, full: None }
    }

    /// Bind `tool` with its spec built once.
    pub fn new(tool: Arc<dyn Tool>) -> Self {
        let spec = Arc::new(ToolSpec::new(tool.model_name(), tool.description(), &tool.parameters()));
        let full = tool
            .full_spec()
            .map(|(description, parameters)| Arc::new(ToolSpec::new(tool.model_name(), description, &parameters)));
        Self { tool, spec, full }
    }
}

/// One tool as `/tools` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolRow {
    /// Its name (`server.tool` for MCP tools).
    pub name: String,
    /// The risk the approval gate sees.
    pub risk: ToolRisk,
    /// `built in` or `MCP server <name>`.
    pub source: String,
}

/// The risk a tool declares, as `/tools` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolRisk {
    /// Every call risks this.
    Fixed(crate::policy::Risk),
    /// Each call is weighed by its arguments (a shell command, a path).
    ByArguments,
}

impl std::fmt::Display for ToolRisk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Fixed(risk) => risk.fmt(f),
            Self::ByArguments => f.write_str("by arguments"),
        }
    }
}

/// The tools a run offers.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: Vec<BoundTool>,
}

impl ToolRegistry {
    /// The built-in tools that work inside the run's workspace and store
    /// (the runtime adds those that start child runs).
    pub fn plain() -> Self {
        let tools: Vec<Arc<dyn Tool>> = vec![
            Arc::new(super::shell::Shell),
            Arc::new(super::file_read::FileRead),
            Arc::new(super::file_write::FileWrite),
            Arc::new(super::send_file::SendFile),
            Arc::new(super::memory_store::MemoryStore),
            Arc::new(super::memory_recall::MemoryRecall),
            Arc::new(super::model_switch::ModelSwitch),
        ];
        Self {
            tools: tools.into_iter().map(BoundTool::new).collect(),
        }
    }

    /// Add (or replace) a tool.
    pub fn with(self, tool: Arc<dyn Tool>) -> Self {
        self.with_bound(BoundTool::new(tool))
    }

    /// Add (or replace by name) a tool whose spec is already built.
    pub fn with_bound(mut self, bound: BoundTool) -> Self {
        self.tools.retain(|b| b.tool.name() != bound.tool.name());
        self.tools.push(bound);
        self
    }

    /// Keep only the tools the risk profile offers (docs/configuration.md, risk profiles).
    pub fn filtered(&self, profile: &RiskProfile) -> Self {
        self.retain(|name| profile.offers_tool(name))
    }

    /// Drop one tool by name.
    pub fn without(&self, name: &str) -> Self {
        self.retain(|n| n != name)
    }

    fn retain(&self, keep: impl Fn(&str) -> bool) -> Self {
        Self {
            tools: self.tools.iter().filter(|b| keep(b.tool.name())).cloned().collect(),
        }
    }

    /// Add tools whose specs are already built.
    pub fn with_all(self, bound: impl IntoIterator<Item = BoundTool>) -> Self {
        bound.into_iter().fold(self, Self::with_bound)
    }

    /// The tool named `name` (its own name or the one the model calls it by).
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools
            .iter()
            .find(|b| b.tool.name() == name || b.spec.name == name)
            .map(|b| &b.tool)
    }

    /// The whole spec of the briefly offered tool the model calls `name`.
    pub fn full_spec(&self, name: &str) -> Option<Arc<ToolSpec>> {
        self.tools.iter().find(|b| b.spec.name == name)?.full.clone()
    }

    /// What `/tools` shows of each tool: its name, risk and source.
    pub fn rows(&self) -> Vec<ToolRow> {
        self.tools
            .iter()
            .map(|b| ToolRow {
                name: b.tool.name().to_string(),
                risk: b.tool.declared_risk(),
                source: b.tool.source(),
            })
            .collect()
    }

    /// The names the model calls the tools by.
    pub fn model_names(&self) -> Vec<&str> {
        self.tools.iter().map(|b| b.spec.name.as_str()).collect()
    }

    /// Every tool's name.
    pub fn names(&self) -> Vec<&'static str> {
        self.tools.iter().map(|b| b.tool.name()).collect()
    }

    /// Whether it offers nothing.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The specs of the offered tools (shared, not copied).
    pub fn specs(&self) -> Vec<Arc<ToolSpec>> {
        self.tools.iter().map(|b| b.spec.clone()).collect()
    }
}
