//! The set of tools one run may offer.

use super::Tool;
use crate::message::ToolSpec;
use parking_lot::Mutex;
use std::collections::HashMap;
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
    /// Whether runs get a version of it for their identity.
    per_identity: bool,
}

impl BoundTool {
    /// The tool's name.
    pub fn name(&self) -> &'static str {
        self.tool.name()
    }

    /// Bind `tool` with its spec built once.
    pub fn new(tool: Arc<dyn Tool>) -> Self {
        let spec = Arc::new(ToolSpec::new(tool.model_name(), tool.description(), &tool.parameters()));
        let full = tool
            .full_spec()
            .map(|(description, parameters)| Arc::new(ToolSpec::new(tool.model_name(), description, &parameters)));
        let per_identity = tool.binds_per_identity();
        Self {
            tool,
            spec,
            full,
            per_identity,
        }
    }
}

/// Tools bound to an identity, by tool name, identity and whether the run
/// may only delegate.
#[derive(Default)]
pub struct IdentityTools(Mutex<HashMap<IdentityKey, BoundTool>>);

/// A tool's name, the identity and whether the run may only delegate.
type IdentityKey = (&'static str, String, bool);

/// One tool as `/tools` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolRow {
    /// Its name (`server.tool` for MCP tools).
    pub name: String,
    /// The risk the approval gate sees.
    pub risk: String,
    /// `built in` or `MCP server <name>`.
    pub source: String,
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

    /// The registry for a run acting as `identity`: each tool that binds
    /// per identity ([`Tool::binds_per_identity`]) replaced by its version
    /// for it, built once per identity and kind of run and kept in `cache`.
    /// The other tools are passed through untouched.
    pub fn for_identity(mut self, identity: &str, delegate_only: bool, cache: &IdentityTools) -> Self {
        for bound in self.tools.iter_mut().filter(|b| b.per_identity) {
            let key = (bound.tool.name(), identity.to_string(), delegate_only);
            let mut cached = cache.0.lock();
            if let Some(made) = cached.get(&key) {
                *bound = made.clone();
            } else if let Some(made) = bound.tool.for_identity(identity, delegate_only).map(BoundTool::new) {
                cached.insert(key, made.clone());
                *bound = made;
            }
        }
        self
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
                risk: b.tool.risk_label(),
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
