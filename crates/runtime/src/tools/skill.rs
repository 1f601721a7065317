//! `skill`: read one of the agent's skills (docs/skills.md): its
//! instructions, and the files beside them, or one of those files. Offered
//! only to an agent that has skills, with their names and short
//! descriptions in its own description (so the list travels with the tool
//! and costs nothing to an agent without skills); reads nothing outside
//! the skill's folder (a confined thread, no link followed) and runs
//! nothing.

use super::{Tool, ToolContext, ToolResult};
use crate::skills::{Skill, Skills};
use serde::Deserialize;
use std::sync::Arc;

/// The tool, with the skills its run may read.
pub(crate) struct SkillTool {
    skills: Arc<Skills>,
    description: String,
}

#[derive(Deserialize)]
struct Args {
    name: String,
    #[serde(default)]
    file: Option<String>,
}

/// The largest file beside a skill that is read.
const MAX_FILE: u64 = 256 * 1024;

#[async_trait::async_trait]
impl Tool for SkillTool {
    fn name(&self) -> &'static str {
        "skill"
    }

    fn description(&self) -> String {
        self.description.clone()
    }

    async fn execute(&self, args: serde_json::Value, _ctx: &ToolContext) -> ToolResult {
        let args: Args = match super::parse_args("skill", args) {
            Ok(a) => a,
            Err(failure) => return failure,
        };
        self.run(args).await
    }
}

impl SkillTool {
    /// The tool over `skills`, when there are any.
    pub(crate) fn over(skills: Skills) -> Option<Self> {
        let list = crate::skills::prompt_section(&skills.found)?;
        let base = super::manifest::entry("skill")
            .map(|e| e.description.clone())
            .unwrap_or_default();
        Some(Self {
            skills: Arc::new(skills),
            description: format!("{base}\n\n{list}"),
        })
    }

    async fn run(&self, args: Args) -> ToolResult {
        let Some(skill) = self.skills.get(args.name.trim()) else {
            let names: Vec<&str> = self.skills.found.iter().take(50).map(|s| s.name.as_str()).collect();
            let more = if self.skills.found.len() > 50 { ", …" } else { "" };
            return ToolResult::fail(format!(
                "no skill is named '{}'; the skills are: {}{more}",
                args.name,
                names.join(", ")
            ));
        };
        match args.file.as_deref().map(str::trim).filter(|f| !f.is_empty()) {
            None => whole(skill).await,
            Some(file) => beside(skill, file).await,
        }
    }
}

async fn whole(skill: &Skill) -> ToolResult {
    match crate::skills::body(skill).await {
        Ok((body, files)) if files.is_empty() => ToolResult::ok(body),
        Ok((body, files)) => ToolResult::ok(format!(
            "{}\n\nFiles beside this skill (read one with `skill` and `file`): {}",
            body.trim_end(),
            files.join(", ")
        )),
        Err(e) => ToolResult::fail(format!("the skill '{}' cannot be read: {e}", skill.name)),
    }
}

async fn beside(skill: &Skill, file: &str) -> ToolResult {
    match crate::skills::file(skill, file, MAX_FILE).await {
        Ok(text) => ToolResult::ok(text),
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => ToolResult::fail(format!(
            "'{file}' is not a file inside the skill '{}' (paths are relative to its folder, without '..')",
            skill.name
        )),
        Err(e) => ToolResult::fail(format!(
            "'{file}' is not a file inside the skill '{}' that can be read ({e}; links are not followed)",
            skill.name
        )),
    }
}
