//! What the model is told about each built-in tool (description and
//! argument schema) and what a call does (its effect), kept as data in
//! `catalog.json` beside this file so the tool files hold only behaviour.
//! A tool whose effect depends on its arguments says `"by arguments"` and
//! computes it itself (see `Tool::effect`).

use crate::policy::{CommandRisk, Effect};
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::LazyLock;

/// One tool's entry.
#[derive(Debug, Deserialize)]
pub(crate) struct Entry {
    pub(crate) description: String,
    pub(crate) parameters: Value,
    effect: String,
}

impl Entry {
    /// The effect as the catalog words it (`read`, `low`, `medium`, `by arguments`).
    pub(crate) fn effect_word(&self) -> &str {
        &self.effect
    }

    /// The effect of any call, for tools whose effect does not depend on
    /// the arguments; unknown or argument-dependent entries fail closed.
    pub(crate) fn effect(&self) -> Effect {
        match self.effect.as_str() {
            "read" => Effect::Read,
            "low" => Effect::Write(CommandRisk::Low),
            "medium" => Effect::Write(CommandRisk::Medium),
            _ => Effect::Write(CommandRisk::High),
        }
    }
}

static CATALOG: LazyLock<HashMap<String, Entry>> = LazyLock::new(|| {
    // The file is part of the binary; `every_builtin_tool_has_an_entry`
    // proves it parses.
    serde_json::from_str(include_str!("catalog.json")).unwrap_or_default()
});

/// The entry of the built-in tool `name`.
pub(crate) fn entry(name: &str) -> Option<&'static Entry> {
    CATALOG.get(name)
}

#[cfg(test)]
mod tests {
    use super::{CATALOG, entry};

    #[test]
    fn every_builtin_tool_has_an_entry_and_nothing_else_does() {
        let names = crate::builtin::tools().names();
        for name in &names {
            let e = entry(name).unwrap_or_else(|| panic!("no catalog entry for {name}"));
            assert!(!e.description.is_empty(), "{name}");
            assert_eq!(e.parameters["type"], "object", "{name}");
            assert!(
                ["read", "low", "medium", "by arguments"].contains(&e.effect.as_str()),
                "{name}: effect {}",
                e.effect
            );
        }
        assert_eq!(CATALOG.len(), names.len());
    }
}
