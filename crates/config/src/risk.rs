//! `[risk_profiles.<name>]`: what an agent's tools may do and who approves.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AutonomyLevel {
    ReadOnly,
    #[default]
    Supervised,
    Full,
}

impl AutonomyLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ReadOnly => "read_only",
            Self::Supervised => "supervised",
            Self::Full => "full",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(default)]
pub struct RiskProfile {
    pub level: AutonomyLevel,
    /// Empty or omitted = no restriction.
    pub allowed_tools: Vec<String>,
    pub excluded_tools: Vec<String>,
    pub deny_all_tools: bool,
    pub auto_approve: Vec<String>,
    pub always_ask: Vec<String>,
    /// Programs `shell` may run. Empty = none.
    pub allowed_commands: Vec<String>,
    pub block_high_risk_commands: bool,
    pub require_approval_for_medium_risk: bool,
    pub delegation_policy: DelegationPolicy,
    pub subagent_auto_approve: bool,
    pub approval_route: Option<ApprovalRoute>,
}

impl Default for RiskProfile {
    fn default() -> Self {
        Self {
            level: AutonomyLevel::Supervised,
            allowed_tools: Vec::new(),
            excluded_tools: Vec::new(),
            deny_all_tools: false,
            auto_approve: Vec::new(),
            always_ask: Vec::new(),
            allowed_commands: Vec::new(),
            block_high_risk_commands: true,
            require_approval_for_medium_risk: true,
            delegation_policy: DelegationPolicy::default(),
            subagent_auto_approve: false,
            approval_route: None,
        }
    }
}

impl RiskProfile {
    /// The risk-profile tool filter (docs/approvals.md).
    pub fn offers_tool(&self, tool: &str) -> bool {
        !self.deny_all_tools
            && (self.allowed_tools.is_empty() || self.allowed_tools.iter().any(|t| t == tool))
            && !self.excluded_tools.iter().any(|t| t == tool)
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DelegationPolicy {
    #[serde(default)]
    pub mode: DelegationMode,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DelegationMode {
    Allow,
    #[default]
    Forbidden,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OnNoApprover {
    #[default]
    Deny,
    InheritOriginator,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(default)]
pub struct ApprovalRoute {
    pub approver_channel: Option<String>,
    pub approver_recipient: Option<String>,
    pub approvers: Vec<String>,
    pub on_no_approver: OnNoApprover,
    pub timeout_secs: u64,
}

impl Default for ApprovalRoute {
    fn default() -> Self {
        Self {
            approver_channel: None,
            approver_recipient: None,
            approvers: Vec::new(),
            on_no_approver: OnNoApprover::Deny,
            timeout_secs: 120,
        }
    }
}

impl ApprovalRoute {
    /// A route can carry a prompt to a person only when all three parts are set.
    pub fn is_complete(&self) -> bool {
        self.approver_channel.as_deref().is_some_and(|c| !c.is_empty())
            && self.approver_recipient.as_deref().is_some_and(|r| !r.is_empty())
            && !self.approvers.is_empty()
    }
}
