//! What an agent's tool schemas cost in every prompt. On a local model the
//! prompt's length is the time to the first token, and tools are sent with
//! every request of a turn; `/status` and `doctor` say how many tokens they
//! take and warn past a quarter of the model's context (docs/models.md,
//! "Prompt size").

use crate::message::ToolSpec;
use std::sync::Arc;
use switchboard_config::Config;

/// The tools offered and about how many prompt tokens their schemas take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolCost {
    /// How many tools.
    pub tools: usize,
    /// Estimated prompt tokens of their names, descriptions and schemas.
    pub tokens: u64,
    /// The model's context, when known.
    pub window: Option<u32>,
}

impl ToolCost {
    /// The cost of `specs` against `window`.
    pub fn of(specs: &[Arc<ToolSpec>], window: Option<u32>) -> Self {
        Self {
            tools: specs.len(),
            tokens: crate::provider::estimate_tools(specs),
            window,
        }
    }

    /// Whether the tools take more than a quarter of the context.
    pub fn too_large(&self) -> bool {
        self.window.is_some_and(|w| self.tokens * 4 > u64::from(w))
    }

    /// One line: `15 tools, about 1685 prompt tokens (21% of the 8192-token
    /// context)`, and what to do when that is too much.
    pub fn describe(&self) -> String {
        let mut line = format!("{} tools, about {} prompt tokens", self.tools, self.tokens);
        if let Some(w) = self.window.filter(|w| *w > 0) {
            let share = self.tokens * 100 / u64::from(w);
            line.push_str(&format!(" ({share}% of the {w}-token context)"));
        }
        if self.too_large() {
            line.push_str(
                "; more than a quarter of the context: offer fewer tools (allowed_tools or excluded_tools in the risk profile)",
            );
        }
        line
    }
}

/// The built-in tools `agent` would be offered under `config` (MCP tools
/// are not counted: their servers are asked separately), without a running
/// gateway.
pub fn builtin_specs(config: &Config, agent: &str) -> Vec<Arc<ToolSpec>> {
    let Some(profile) = config.risk_profile_of(agent) else {
        return Vec::new();
    };
    if !config.runtime_profile_of(agent).agentic {
        return Vec::new();
    }
    crate::builtin::tools().filtered(profile).specs()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quarter_of_the_context_is_the_limit() {
        let cost = |tokens, window| ToolCost {
            tools: 15,
            tokens,
            window,
        };
        assert_eq!(
            cost(1685, Some(8192)).describe(),
            "15 tools, about 1685 prompt tokens (20% of the 8192-token context)"
        );
        assert!(!cost(2048, Some(8192)).too_large());
        assert!(cost(2049, Some(8192)).too_large());
        assert!(cost(2049, Some(8192)).describe().contains("offer fewer tools"));
        assert_eq!(cost(300, None).describe(), "15 tools, about 300 prompt tokens");
    }
}
