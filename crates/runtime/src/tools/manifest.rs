//! What the model is told about each built-in tool (description and
//! argument schema) and what a call does (its effect), kept as data in
//! `manifest.json` beside this file so the tool files hold only behaviour.
//! A tool whose effect depends on its arguments says `"by arguments"` and
//! computes it itself (see `Tool::effect`).

use crate::policy::Risk;
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::LazyLock;

/// One tool's entry.
#[derive(Debug, Deserialize)]
pub(crate) struct Entry {
    pub(crate) description: String,
    pub(crate) parameters: Value,
    effect: Declared,
}

/// What the manifest says a call of a tool risks.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Declared {
    /// Every call risks this.
    Fixed(Risk),
    /// `"by arguments"`: the tool works it out per call (`Tool::effect`).
    ByArguments(ByArguments),
}

#[derive(Debug, Deserialize)]
enum ByArguments {
    #[serde(rename = "by arguments")]
    Word,
}

impl Entry {
    /// The effect as the manifest declares it.
    pub(crate) fn declared(&self) -> super::ToolRisk {
        match self.effect {
            Declared::Fixed(risk) => super::ToolRisk::Fixed(risk),
            Declared::ByArguments(_) => super::ToolRisk::ByArguments,
        }
    }

    /// The effect of any call, for tools whose effect does not depend on
    /// the arguments; argument-dependent entries fail closed.
    pub(crate) fn effect(&self) -> Risk {
        match self.effect {
            Declared::Fixed(risk) => risk,
            Declared::ByArguments(_) => Risk::High,
        }
    }
}

static CATALOG: LazyLock<HashMap<String, Entry>> = LazyLock::new(|| {
    // The file is part of the binary; `every_builtin_tool_has_an_entry`
    // proves it parses.
    serde_json::from_str(include_str!("manifest.json")).unwrap_or_default()
});

/// The entry of the built-in tool `name`.
pub(crate) fn entry(name: &str) -> Option<&'static Entry> {
    CATALOG.get(name)
}

#[cfg(test)]
mod tests {
    use super::{CATALOG, Risk, entry};
    use crate::tools::ToolRisk;

    #[test]
    fn every_builtin_tool_has_an_entry_and_nothing_else_does() {
        let mut names = crate::builtin::tools().names();
        // `skill` is added per run, to an agent that has skills.
        names.push("skill");
        for name in &names {
            let e = entry(name).unwrap_or_else(|| panic!("no manifest entry for {name}"));
            assert!(!e.description.is_empty(), "{name}");
            assert_eq!(e.parameters["type"], "object", "{name}");
            // No built-in is declared high as a whole: a high call is
            // weighed by its arguments.
            assert_ne!(e.declared(), ToolRisk::Fixed(Risk::High), "{name}");
        }
        assert_eq!(CATALOG.len(), names.len());
    }
}
