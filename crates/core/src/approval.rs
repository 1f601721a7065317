//! Channel-neutral approval prompts (docs/approvals.md). The runtime builds them;
//! each channel renders them natively (buttons, reactions) or as text.

use serde::{Deserialize, Serialize};

/// What an approver can answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ApprovalChoice {
    /// Allow this one call.
    AllowOnce,
    /// Allow this tool for the rest of this run.
    Always,
    /// Refuse the call.
    Deny,
}

impl ApprovalChoice {
    /// Every choice, in the order prompts offer them.
    pub const ALL: [ApprovalChoice; 3] = [Self::AllowOnce, Self::Always, Self::Deny];

    /// The button label.
    pub fn label(self) -> &'static str {
        match self {
            Self::AllowOnce => "Allow once",
            Self::Always => "Always (this run)",
            Self::Deny => "Deny",
        }
    }

    /// The word a button, a reaction or the local API carries for it.
    pub fn word(self) -> &'static str {
        match self {
            Self::AllowOnce => "once",
            Self::Always => "always",
            Self::Deny => "deny",
        }
    }

    /// The choice a carried word stands for (`allow_once` is the local
    /// API's older spelling of `once`).
    pub fn from_word(word: &str) -> Option<Self> {
        match word {
            "once" | "allow_once" => Some(Self::AllowOnce),
            "always" => Some(Self::Always),
            "deny" => Some(Self::Deny),
            _ => None,
        }
    }

    /// A button's data: `sb:<request id>:<word>`.
    pub fn button_data(self, approval: &str) -> String {
        format!("sb:{approval}:{}", self.word())
    }

    /// The request and choice a button's data carries; `None` for other
    /// buttons (and ids that are not plain words).
    pub fn from_button_data(data: &str) -> Option<(String, Self)> {
        let rest = data.strip_prefix("sb:")?;
        let (id, word) = rest.split_once(':')?;
        if id.is_empty() || id.len() > 64 || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            return None;
        }
        let choice = Self::ALL.into_iter().find(|c| c.word() == word)?;
        Some((id.to_string(), choice))
    }
}

/// The prompt shown to approvers.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ApprovalPrompt {
    /// The request id people type (`/approve <id>`).
    pub id: String,
    /// The agent whose tool call waits.
    pub agent: String,
    /// Caller chain for delegated runs, root first.
    pub caller_chain: Vec<String>,
    /// The tool to run.
    pub tool: String,
    /// Argument summary with secrets already redacted.
    pub summary: String,
    /// `low`, `medium` or `high`.
    pub risk: String,
    /// Seconds since the Unix epoch after which the request expires.
    pub deadline_unix: i64,
}

impl ApprovalPrompt {
    /// The text form every channel can show, with the text fallback commands.
    pub fn render_text(&self) -> String {
        let chain = if self.caller_chain.is_empty() {
            String::new()
        } else {
            format!(" (via {})", self.caller_chain.join(" → "))
        };
        format!(
            "Approval needed [{id}]\nagent: {agent}{chain}\ntool: {tool} (risk: {risk})\nargs: {summary}\nReply /approve {id} [always] or /deny {id} [reason].",
            id = self.id,
            agent = self.agent,
            tool = self.tool,
            risk = self.risk,
            summary = self.summary,
        )
    }
}

/// How a prompt ended, for editing it after the fact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum PromptState {
    /// Someone answered.
    Decided {
        /// What they chose.
        choice: ApprovalChoice,
        /// Who (a user id).
        by: String,
        /// When, in seconds since the Unix epoch.
        at_unix: i64,
    },
    /// Nobody answered in time (or the process that asked is gone).
    Expired,
    /// The run that asked was stopped before anyone decided.
    Cancelled,
}

impl PromptState {
    /// One line saying how the request ended, for edited prompts.
    pub fn describe(&self) -> String {
        match self {
            Self::Decided { choice, by, at_unix } => {
                let what = match choice {
                    ApprovalChoice::AllowOnce => "Allowed once",
                    ApprovalChoice::Always => "Allowed for this run",
                    ApprovalChoice::Deny => "Denied",
                };
                format!("{what} by {by} at {at_unix} (Unix time).")
            }
            Self::Expired => "Expired: no decision was made in time.".into(),
            Self::Cancelled => "Cancelled: the run that asked was stopped.".into(),
        }
    }
}
