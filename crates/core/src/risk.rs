//! How risky an action is — a shell command, a built-in or MCP tool call,
//! an approval request — as one ordered type. Its words (`read`, `low`,
//! `medium`, `high`) are what configuration, the tool catalog, approval
//! prompts and the audit record use; serde and [`Risk::as_str`] map them
//! here and nowhere else.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// How risky an action is, in increasing order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", try_from = "String")]
pub enum Risk {
    /// Reads only (allowed even under `read_only`).
    Read,
    /// Changes little, or harmlessly.
    Low,
    /// Changes files or state.
    Medium,
    /// Destructive, or runs programs of the caller's choosing.
    High,
}

impl Risk {
    /// `read`, `low`, `medium` or `high`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
        }
    }

    /// The risk an approval weighs: a read counts as low.
    pub fn at_least_low(self) -> Self {
        self.max(Self::Low)
    }

    /// The risk a stored or received word names; an unknown word is
    /// high (fail closed).
    pub fn from_word(word: &str) -> Self {
        word.parse().unwrap_or(Self::High)
    }
}

impl fmt::Display for Risk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A word that is not a risk.
#[derive(Debug, thiserror::Error)]
#[error("'{0}' is not a risk; use read, low, medium or high")]
pub struct NotARisk(pub String);

impl FromStr for Risk {
    type Err = NotARisk;
    fn from_str(word: &str) -> Result<Self, NotARisk> {
        match word {
            "read" => Ok(Self::Read),
            "low" => Ok(Self::Low),
            "medium" => Ok(Self::Medium),
            "high" => Ok(Self::High),
            other => Err(NotARisk(other.to_string())),
        }
    }
}

impl TryFrom<String> for Risk {
    type Error = NotARisk;
    fn try_from(word: String) -> Result<Self, NotARisk> {
        word.parse()
    }
}

#[cfg(test)]
mod tests {
    use super::Risk;

    #[test]
    fn words_order_and_unknowns() {
        assert!(Risk::Read < Risk::Low && Risk::Low < Risk::Medium && Risk::Medium < Risk::High);
        for r in [Risk::Read, Risk::Low, Risk::Medium, Risk::High] {
            assert_eq!(r.as_str().parse::<Risk>().unwrap(), r);
            assert_eq!(serde_json::to_string(&r).unwrap(), format!("\"{r}\""));
        }
        assert_eq!(Risk::from_word("extreme"), Risk::High);
        assert!("Low".parse::<Risk>().is_err());
        let e = serde_json::from_str::<Risk>("\"severe\"").unwrap_err().to_string();
        assert!(e.contains("'severe' is not a risk"), "{e}");
    }
}
