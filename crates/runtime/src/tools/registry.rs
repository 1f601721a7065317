//! The set of tools one run may offer.

use super::Tool;
use crate::message::ToolSpec;
use std::sync::Arc;
use switchboard_config::RiskProfile;

/// Each tool with its spec, built once when the tool joins a registry and
/// shared by every run and request that offers it.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: Vec<(Arc<dyn Tool>, Arc<ToolSpec>)>,
}

fn entry(tool: Arc<dyn Tool>) -> (Arc<dyn Tool>, Arc<ToolSpec>) {
    let spec = Arc::new(ToolSpec {
        name: tool.name().to_string(),
        description: tool.description(),
        parameters: tool.parameters(),
    });
    (tool, spec)
}

impl ToolRegistry {
    /// Every built-in tool this crate implements.
    pub fn builtin() -> Self {
        let tools: Vec<Arc<dyn Tool>> = vec![
            Arc::new(super::shell::Shell),
            Arc::new(super::file_read::FileRead),
            Arc::new(super::file_write::FileWrite),
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
            tools: tools.into_iter().map(entry).collect(),
        }
    }

    pub fn with(mut self, tool: Arc<dyn Tool>) -> Self {
        self.tools.retain(|(t, _)| t.name() != tool.name());
        self.tools.push(entry(tool));
        self
    }

    /// Keep only the tools the risk profile offers (SPEC §5 filter).
    pub fn filtered(&self, profile: &RiskProfile) -> Self {
        self.retain(|name| profile.offers_tool(name))
    }

    /// Drop one tool by name.
    pub fn without(&self, name: &str) -> Self {
        self.retain(|n| n != name)
    }

    fn retain(&self, keep: impl Fn(&str) -> bool) -> Self {
        Self {
            tools: self.tools.iter().filter(|(t, _)| keep(t.name())).cloned().collect(),
        }
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|(t, _)| t.name() == name).map(|(t, _)| t)
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.tools.iter().map(|(t, _)| t.name()).collect()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The specs of the offered tools (shared, not copied).
    pub fn specs(&self) -> Vec<Arc<ToolSpec>> {
        self.tools.iter().map(|(_, spec)| spec.clone()).collect()
    }
}
