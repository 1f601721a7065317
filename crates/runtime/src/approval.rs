//! The approval broker seam: the runtime decides *that* a person must be
//! asked; a broker (terminal, ops room, ...) decides *how* and returns what
//! happened, so the model can be told the truth about it.

use crate::policy::Risk;
use async_trait::async_trait;
use parking_lot::Mutex;
use serde::Serialize;
use std::collections::HashSet;
use switchboard_config::ApprovalRoute;
use switchboard_core::ChatAddress;

/// A tool call waiting for a person.
#[derive(Debug, Clone, Serialize)]
pub struct ApprovalRequest {
    /// The request id.
    pub id: String,
    /// The agent whose call waits.
    pub agent: String,
    /// Caller chain for delegated runs, root first (empty at top level).
    pub caller_chain: Vec<String>,
    /// The tool.
    pub tool: String,
    /// Argument summary with secrets redacted.
    pub summary: String,
    /// How risky the call is.
    pub risk: switchboard_core::Risk,
    /// The risk profile that asked.
    pub profile_name: String,
    /// The route of the risk profile in force, if any.
    #[serde(skip)]
    pub route: Option<ApprovalRoute>,
    /// Where the turn that wants this came from.
    pub origin: Option<ChatAddress>,
    /// The person whose message started the turn.
    pub requested_by: Option<String>,
    /// The registry run whose tool call waits (none for a person's turn).
    pub run_id: Option<String>,
    /// Whether `on_no_approver = "inherit-originator"` may ask in the
    /// originating chat (never for delegated children).
    pub originator_may_decide: bool,
    /// Route timeout, already capped by the run's own remaining time.
    pub timeout_secs: u64,
}

/// What happened to a request. Only `Approved` lets the tool run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalOutcome {
    /// Allowed.
    Approved {
        /// Who decided.
        by: String,
        /// For the rest of the run.
        always: bool,
    },
    /// Refused.
    Denied {
        /// Who decided.
        by: String,
        /// Why, when given.
        reason: Option<String>,
    },
    /// Nobody decided in time.
    TimedOut {
        /// How long it waited.
        after_secs: u64,
    },
    /// Nobody could be asked (no route, channel not running, non-interactive
    /// run, disconnect); `why` says which.
    Unavailable {
        /// Why nobody could be asked.
        why: String,
    },
}

impl ApprovalOutcome {
    /// The tool result the model sees when the call did not run.
    pub fn refusal_text(&self, tool: &str) -> Option<String> {
        Some(match self {
            Self::Approved { .. } => return None,
            Self::Denied { by, reason } => match reason {
                Some(r) => format!("{tool} was not run: denied by {by} ({r})."),
                None => format!("{tool} was not run: denied by {by}."),
            },
            Self::TimedOut { after_secs } => {
                format!("{tool} was not run: the approval request timed out after {after_secs}s without a decision.")
            }
            Self::Unavailable { why } => {
                format!("{tool} was not run: approval was needed but no approver could be asked ({why}).")
            }
        })
    }
}

/// Asks people to approve tool calls.
#[async_trait]
pub trait ApprovalBroker: Send + Sync {
    /// Ask, and wait for the outcome.
    async fn request(&self, request: ApprovalRequest) -> ApprovalOutcome;
    /// Tell the approvers of `route` something that needs no decision (a
    /// refused command and the setting that would allow it). Best effort;
    /// by default nobody is told.
    async fn tell(&self, _route: &ApprovalRoute, _text: &str) {}
}

/// A broker for runs with nobody to ask: every request is refused as
/// unavailable (never as "denied by a person").
pub struct NoApprover(pub String);

#[async_trait]
impl ApprovalBroker for NoApprover {
    async fn request(&self, _request: ApprovalRequest) -> ApprovalOutcome {
        ApprovalOutcome::Unavailable { why: self.0.clone() }
    }
}

/// "Always (this run)" grants; a fresh one per run, never shared. A grant
/// is for one tool at one risk class: "always" for `shell ls` (low) does
/// not let a later high-risk `shell` call through without asking.
#[derive(Debug, Default)]
pub struct RunGrants(Mutex<HashSet<(String, Risk)>>);

impl RunGrants {
    /// Allow `tool` at `risk` for the rest of the run.
    pub fn grant(&self, tool: &str, risk: Risk) {
        self.0.lock().insert((tool.to_string(), risk));
    }
    /// Whether `tool` at `risk` was allowed for the run.
    pub fn has(&self, tool: &str, risk: Risk) -> bool {
        self.0.lock().contains(&(tool.to_string(), risk))
    }
}
