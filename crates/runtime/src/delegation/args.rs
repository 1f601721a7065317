//! The `delegate` tool's arguments.

use serde::Deserialize;

#[derive(Debug, Deserialize, Default)]
#[serde(default)]
pub(crate) struct Args {
    pub action: Option<String>,
    pub agent: Option<String>,
    pub prompt: Option<String>,
    pub context: Option<String>,
    pub background: bool,
    pub parallel: Vec<String>,
    pub task_id: Option<String>,
    pub task_ids: Vec<String>,
    pub timeout_ms: Option<u64>,
}

impl Args {
    /// The message the child receives: the prompt, then any context.
    pub(crate) fn message(&self) -> Option<String> {
        let prompt = self.prompt.as_deref().map(str::trim).filter(|p| !p.is_empty())?;
        Some(match self.context.as_deref().map(str::trim).filter(|c| !c.is_empty()) {
            Some(c) => format!("{prompt}\n\nContext:\n{c}"),
            None => prompt.to_string(),
        })
    }
}
