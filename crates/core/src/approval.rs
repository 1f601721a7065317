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
    /// How risky the call is.
    pub risk: crate::Risk,
    /// Seconds since the Unix epoch after which the request expires.
    pub deadline_unix: i64,
    /// What is asked: a tool call, or letting a person in.
    #[serde(default)]
    pub kind: PromptKind,
    /// How many different people must allow it (two-person rule).
    #[serde(default = "one")]
    pub approvals_required: u32,
}

fn one() -> u32 {
    1
}

/// What a prompt asks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PromptKind {
    /// May an agent's tool call run (`tool`, `summary`, `risk`)?
    #[default]
    Tool,
    /// May a person talk to the bot (`summary` says who; `tool` holds
    /// their code)?
    Pairing,
}

impl ApprovalPrompt {
    /// The answers this prompt offers, in order.
    pub fn choices(&self) -> &'static [ApprovalChoice] {
        match self.kind {
            PromptKind::Tool => &ApprovalChoice::ALL,
            PromptKind::Pairing => &[ApprovalChoice::AllowOnce, ApprovalChoice::Deny],
        }
    }

    /// A button's label for `choice` on this prompt.
    pub fn label(&self, choice: ApprovalChoice) -> &'static str {
        match (self.kind, choice) {
            (PromptKind::Pairing, ApprovalChoice::AllowOnce | ApprovalChoice::Always) => "Allow",
            _ => choice.label(),
        }
    }

    /// The text form every channel can show, with the text fallback commands.
    pub fn render_text(&self) -> String {
        if self.kind == PromptKind::Pairing {
            return format!(
                "Pairing request [{id}]\n{summary}\ncode: {code}\nReply /pair {code} to let them in, or /deny {id}.",
                id = self.id,
                summary = self.summary,
                code = self.tool,
            );
        }
        let two = if self.approvals_required > 1 {
            format!("\nneeds {} different approvers", self.approvals_required)
        } else {
            String::new()
        };
        let chain = if self.caller_chain.is_empty() {
            String::new()
        } else {
            format!(" (via {})", self.caller_chain.join(" → "))
        };
        format!(
            "Approval needed [{id}]\nagent: {agent}{chain}\ntool: {tool} (risk: {risk})\nargs: {summary}{two}\nReply /approve {id} [always] or /deny {id} [reason].",
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
    /// Some of the people needed allowed; the prompt still takes answers.
    Partial {
        /// Who allowed so far (user ids).
        allowed_by: Vec<String>,
        /// How many different people must.
        need: u32,
    },
    /// Nobody answered in time (or the process that asked is gone).
    Expired,
    /// The run that asked was stopped before anyone decided.
    Cancelled,
}

impl PromptState {
    /// Whether the request is over (the prompt takes no more answers).
    pub fn is_final(&self) -> bool {
        !matches!(self, Self::Partial { .. })
    }

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
            Self::Partial { allowed_by, need } => format!(
                "{} of {need} approvals (by {}); waiting for another approver.",
                allowed_by.len(),
                allowed_by.join(", ")
            ),
            Self::Expired => "Expired: no decision was made in time.".into(),
            Self::Cancelled => "Cancelled: the run that asked was stopped.".into(),
        }
    }
}
