//! Subagent sessions (docs/delegation.md): `sessions_spawn` starts a child session of
//! an allowed agent and returns at once; the child runs in the global
//! `subagent` lane, and when it ends an announce step in its own session
//! decides what to tell the requester (or `ANNOUNCE_SKIP`). Results reach
//! the requester as data: into the chat through the outbox from the main
//! session, into the parent session for nested children.

mod agents_list;
mod history;
mod list;
mod send;
mod spawn;
mod subagents_tool;

pub use agents_list::AgentsList;
pub use history::SessionsHistory;
pub use list::SessionsList;
pub use send::SessionsSend;
pub use spawn::SessionsSpawn;
pub use subagents_tool::SubagentsTool;

use switchboard_config::Config;

pub use crate::children::ANNOUNCE_SKIP;

/// Tools only orchestrators (children that may still spawn) keep.
pub const SESSION_TOOLS: &[&str] = &[
    "sessions_spawn",
    "subagents",
    "sessions_list",
    "sessions_history",
    "sessions_send",
    "agents_list",
];

/// The agents `caller` may spawn sessions of: itself, plus `allow_agents`
/// (`"*"` = every enabled agent).
pub fn allowed_agents(config: &Config, caller: &str) -> Vec<String> {
    let Some(c) = config.agents.get(caller) else {
        return Vec::new();
    };
    let any = c.subagents.allow_agents.iter().any(|a| a == "*");
    config
        .agents
        .iter()
        .filter(|(alias, a)| a.enabled && (alias.as_str() == caller || any || c.subagents.allow_agents.contains(alias)))
        .map(|(alias, _)| alias.clone())
        .collect()
}
