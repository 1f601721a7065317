//! `[people.<name>]`: one person's ids on every platform, so that a person
//! counts once wherever they answer from (two-person approvals,
//! docs/approvals.md).

use crate::Config;
use serde::{Deserialize, Serialize};

/// `[people.<name>]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Person {
    /// Their ids (`tg:7`, `discord:42`, `@ann:example.org`, `cli:ann`).
    pub ids: Vec<String>,
}

impl Config {
    /// Who `id` is: `person:<name>` when a `[people.<name>]` lists it,
    /// else the id itself.
    pub fn person_of(&self, id: &str) -> String {
        self.people
            .iter()
            .find(|(_, p)| p.ids.iter().any(|i| i == id))
            .map_or_else(|| id.to_string(), |(name, _)| format!("person:{name}"))
    }
}
