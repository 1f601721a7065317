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
}

impl BoundTool {
    /// Bind `tool` with its spec built once.
    pub fn new(tool: Arc<dyn Tool>) -> Self {
        let spec = Arc::new(ToolSpec::new(tool.name(), tool.description(), &tool.parameters()));
        Self { tool, spec }
    }
}

/// The tools a run offers.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: Vec<BoundTool>,
}

impl ToolRegistry {
    /// Every built-in tool this crate implements.
    pub fn builtin() -> Self {
        let tools: Vec<Arc<dyn Tool>> = vec![
            Arc::new(super::shell::Shell),
            Arc::new(super::file_read::FileRead),
            Arc::new(super::file_write::FileWrite),
            Arc::new(super::send_file::SendFile),
            Arc::new(super::memory_store::MemoryStore),
            Arc::new(super::memory_recall::MemoryRecall),
            Arc::new(super::model_switch::ModelSwitch),
            Arc::new(crate::subagent::SpawnSubagent),
            Arc::new(crate::delegation::unbound()),
            Arc::new(crate::sessions::SessionsSpawn),
            Arc::new(crate::sessions::SessionsList),
            Arc::new(crate::sessions::SessionsHistory),
            Arc::new(crate::sessions::AgentsList),
            Arc::new(crate::sessions::SessionsSend),
            Arc::new(crate::sessions::SubagentsTool),
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

    /// The tool named `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|b| b.tool.name() == name).map(|b| &b.tool)
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

#[cfg(test)]
mod tests {
    use super::ToolRegistry;

    /// The configuration checks tool names against its own list (it cannot
    /// depend on the runtime): that list and the registry must agree.
    #[test]
    fn the_configs_tool_names_are_the_registrys() {
        let mut registry = ToolRegistry::builtin().names();
        let mut config = switchboard_config::BUILTIN_TOOLS.to_vec();
        registry.sort_unstable();
        config.sort_unstable();
        assert_eq!(registry, config);
    }
}
