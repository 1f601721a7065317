//! `/skills`: the chat agent's skills with their whole descriptions, and,
//! for an operator, the skill folders that could not be used and why.

use super::CommandContext;

pub(super) fn apply(ctx: &CommandContext<'_>) -> String {
    let runtime = ctx.runtime;
    let skills = runtime.skills_of(ctx.agent);
    let mut lines = Vec::new();
    if skills.found.is_empty() {
        lines.push(format!(
            "{} has no skills. Put a folder with a SKILL.md in its workspace's skills folder (docs/skills.md).",
            ctx.agent
        ));
    } else {
        lines.push(format!("Skills of {}:", ctx.agent));
        for s in &skills.found {
            lines.push(format!("- {} — {}", s.name, s.description));
        }
    }
    if !skills.problems.is_empty() {
        if ctx.sender_may_operate() {
            for p in &skills.problems {
                lines.push(format!("Left out: {}: {}", p.path.display(), p.problem));
            }
        } else {
            lines.push(format!(
                "{} skill folder(s) could not be used (an operator can see why).",
                skills.problems.len()
            ));
        }
    }
    lines.join("\n")
}
