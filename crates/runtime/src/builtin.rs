//! The built-in tool set: the plain tools (`tools`) and those that start
//! or steer child runs (`subagent`, `delegation`, `sessions`), which reach
//! the runtime through their run's context.

use crate::delegation::DelegateTool;
use crate::sessions::{AgentsList, SessionsHistory, SessionsList, SessionsSend, SessionsSpawn, SubagentsTool};
use crate::subagent::SpawnSubagent;
use crate::tools::ToolRegistry;
use std::sync::Arc;

/// Every built-in tool (each run is offered `delegate` with its own
/// agent's roster, see `Rules::bind`).
pub(crate) fn tools() -> ToolRegistry {
    ToolRegistry::plain()
        .with(Arc::new(SpawnSubagent))
        .with(Arc::new(DelegateTool))
        .with(Arc::new(SessionsSpawn))
        .with(Arc::new(SessionsList))
        .with(Arc::new(SessionsHistory))
        .with(Arc::new(AgentsList))
        .with(Arc::new(SessionsSend))
        .with(Arc::new(SubagentsTool))
}

#[cfg(test)]
mod tests {
    /// The configuration checks tool names against its own list (it cannot
    /// depend on the runtime): that list and the built-in set must agree.
    #[test]
    fn the_configs_tool_names_are_the_registrys() {
        let mut registry = super::tools().names();
        // `skill` is added per run, to an agent that has skills.
        registry.push("skill");
        let mut config = switchboard_config::BUILTIN_TOOLS.to_vec();
        registry.sort_unstable();
        config.sort_unstable();
        assert_eq!(registry, config);
    }
}
