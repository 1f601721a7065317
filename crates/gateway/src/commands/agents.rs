//! `/agents`: the configured agents and where they answer.

use super::CommandContext;

pub(super) fn apply(ctx: &CommandContext<'_>) -> String {
    let config = &ctx.runtime.config();
    let mut lines = vec!["Agents:".to_string()];
    for (alias, a) in &config.agents {
        let marker = if alias == ctx.agent { " (this chat)" } else { "" };
        let state = if a.enabled { "" } else { " [disabled]" };
        lines.push(format!(
            "- {alias}{marker}{state}: provider {}, risk profile {}",
            a.model_provider, a.risk_profile
        ));
    }
    lines.join("\n")
}
