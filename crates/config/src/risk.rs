//! `[risk_profiles.<name>]`: what an agent's tools may do and who approves.

use serde::{Deserialize, Serialize};
use switchboard_core::Risk;

/// How much an agent may do without asking (docs/approvals.md).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AutonomyLevel {
    /// No writes, no commands.
    ReadOnly,
    /// Ask for tools not auto-approved and for risky commands.
    #[default]
    Supervised,
    /// Ask only for `always_ask` tools.
    Full,
}

impl AutonomyLevel {
    /// The configuration word.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ReadOnly => "read_only",
            Self::Supervised => "supervised",
            Self::Full => "full",
        }
    }
}

/// `[risk_profiles.<name>]`: what an agent may do, and what needs an approval.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(default)]
pub struct RiskProfile {
    /// `read_only` (no writes, no commands), `supervised` (ask for tools not in `auto_approve` and for medium-risk commands), `full` (ask only for `always_ask` tools, default `supervised`).
    pub level: AutonomyLevel,
    /// Empty or omitted = no restriction; MCP tools as `server.tool` or `server.*`.
    pub allowed_tools: Vec<String>,
    /// Tools never offered (default `[]`).
    pub excluded_tools: Vec<String>,
    /// Offer no tools at all (default false).
    pub deny_all_tools: bool,
    /// Tools run without asking under `supervised` (default `[]`).
    pub auto_approve: Vec<String>,
    /// Tools that always need an approval (default `[]`).
    pub always_ask: Vec<String>,
    /// Programs `shell` may run. Empty = none.
    pub allowed_commands: Vec<String>,
    /// Refuse high-risk commands outright (default true).
    pub block_high_risk_commands: bool,
    /// Ask before medium-risk commands (default true).
    pub require_approval_for_medium_risk: bool,
    /// `[risk_profiles.<name>.delegation_policy]`.
    pub delegation_policy: DelegationPolicy,
    /// Children's commands that are dangerous for a child go through the normal gate instead of always needing an operator (default false).
    pub subagent_auto_approve: bool,
    /// Where requests go; without a complete route a request is unavailable (the tool is not run), unless `on_no_approver = "inherit-originator"` (default none).
    pub approval_route: Option<ApprovalRoute>,
    /// The network commands have: `none`, `loopback` (their own, not the host's) or `any` (default `none`).
    pub network: crate::NetworkAccess,
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
            network: crate::NetworkAccess::None,
        }
    }
}

impl RiskProfile {
    /// The risk-profile tool filter (docs/approvals.md).
    pub fn offers_tool(&self, tool: &str) -> bool {
        !self.deny_all_tools
            && (self.allowed_tools.is_empty() || crate::mcp::listed(&self.allowed_tools, tool))
            && !crate::mcp::listed(&self.excluded_tools, tool)
    }
}

/// `[risk_profiles.<name>.delegation_policy]`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DelegationPolicy {
    /// `allow` lets this profile's agents delegate at all (default `forbidden`).
    #[serde(default)]
    pub mode: DelegationMode,
}

/// Whether agents of a profile may delegate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DelegationMode {
    /// They may.
    Allow,
    /// They may not.
    #[default]
    Forbidden,
}

/// What happens to a request when no complete route exists.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OnNoApprover {
    /// Deny the request.
    #[default]
    Deny,
    /// Ask the person who wrote, in their chat.
    InheritOriginator,
}

/// `[risk_profiles.<name>.approval_route]`: where requests go and who decides.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(default)]
pub struct ApprovalRoute {
    /// The channel instance prompts go to (`telegram.main`, default none).
    pub approver_channel: Option<String>,
    /// A room name of that channel's `rooms`, or a chat id (default none).
    pub approver_recipient: Option<String>,
    /// People who may decide (`tg:7`, `@op:example.org`, `cli:alice`, default `[]`).
    pub approvers: Vec<String>,
    /// When the route is incomplete: `deny`, or `inherit-originator` (the person who wrote decides, default `deny`).
    pub on_no_approver: OnNoApprover,
    /// An unanswered request expires (and is denied) after this long (default 120).
    pub timeout_secs: u64,
    /// How many different people must allow a request before the tool runs (1 or 2, default 1); a deny by anyone ends it.
    pub approvals_required: u32,
    /// With `approvals_required = 2`: only requests of this risk or higher need two (`low`, `medium`, `high`; default: every request).
    pub approvals_required_min_risk: Option<Risk>,
}

impl Default for ApprovalRoute {
    fn default() -> Self {
        Self {
            approver_channel: None,
            approver_recipient: None,
            approvers: Vec::new(),
            on_no_approver: OnNoApprover::Deny,
            timeout_secs: 120,
            approvals_required: 1,
            approvals_required_min_risk: None,
        }
    }
}

impl ApprovalRoute {
    /// How many people must allow a request of `risk` on this route.
    pub fn required_for(&self, risk: Risk) -> u32 {
        let applies = self.approvals_required_min_risk.is_none_or(|min| risk >= min);
        if applies { self.approvals_required.max(1) } else { 1 }
    }

    /// A route can carry a prompt to a person only when all three parts are set.
    pub fn is_complete(&self) -> bool {
        self.approver_channel.as_deref().is_some_and(|c| !c.is_empty())
            && self.approver_recipient.as_deref().is_some_and(|r| !r.is_empty())
            && !self.approvers.is_empty()
    }
}
