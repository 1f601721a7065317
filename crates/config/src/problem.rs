//! One thing wrong with a configuration, at its TOML path: what `check`,
//! `load` and validation report.

use std::fmt;

/// One thing wrong with a configuration, at a TOML path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Dotted TOML path of the offending key, e.g. `agents.main.model_provider`.
    pub path: String,
    /// What is wrong and what to change.
    pub message: String,
}

impl Problem {
    /// A problem at `path`.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}
