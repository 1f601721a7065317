//! `/help`: what can be typed here, from the command catalog.

use switchboard_core::CATALOG;

pub(super) fn apply() -> String {
    let mut lines = vec!["Commands:".to_string()];
    for c in CATALOG {
        let usage = if c.usage.is_empty() {
            String::new()
        } else {
            format!(" {}", c.usage)
        };
        let only = if c.terminal_only { " (switchboard chat)" } else { "" };
        lines.push(format!("/{}{usage} — {}{only}; for {}", c.name, c.about, c.who));
    }
    lines.push("Anything else goes to the agent.".into());
    lines.join("\n")
}
