//! `[people.<name>]`: one person's ids on every platform, so that a person
//! counts once wherever they answer from (two-person approvals,
//! docs/approvals.md).

use serde::{Deserialize, Serialize};

/// `[people.<name>]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Person {
    /// Their ids (`tg:7`, `discord:42`, `@ann:example.org`, `cli:ann`).
    pub ids: Vec<String>,
}
