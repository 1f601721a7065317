//! The built-in tool set: the plain tools (`tools`) and those that start
//! or steer child runs (`subagent`, `delegation`, `sessions`), which hold
//! the runtime through a [`CoreRef`].

use crate::core::CoreRef;
use crate::delegation::DelegateTool;
use crate::sessions::{AgentsList, SessionsHistory, SessionsList, SessionsSend, SessionsSpawn, SubagentsTool};
use crate::subagent::SpawnSubagent;
use crate::tools::ToolRegistry;
use std::sync::Arc;

/// Every built-in tool, the orchestrating ones bound to `core`.
pub(crate) fn tools(core: CoreRef) -> ToolRegistry {
    ToolRegistry::plain()
        .with(Arc::new(SpawnSubagent { core: core.clone() }))
        .with(Arc::new(DelegateTool::unbound(core.clone())))
        .with(Arc::new(SessionsSpawn { core: core.clone() }))
        .with(Arc::new(SessionsList))
        .with(Arc::new(SessionsHistory))
        .with(Arc::new(AgentsList { core: core.clone() }))
        .with(Arc::new(SessionsSend))
        .with(Arc::new(SubagentsTool { core }))
}

#[cfg(test)]
mod tests {
    /// The configuration checks tool names against its own list (it cannot
    /// depend on the runtime): that list and the built-in set must agree.
    #[test]
    fn the_configs_tool_names_are_the_registrys() {
        let core = crate::core::CoreRef::detached();
        let mut registry = super::tools(core).names();
        let mut config = switchboard_config::BUILTIN_TOOLS.to_vec();
        registry.sort_unstable();
        config.sort_unstable();
        assert_eq!(registry, config);
    }
}
