//! Approval requests and decisions: the audit trail of who allowed what.

use crate::stmt::Stmt;
use crate::{Store, StoreError};
use sqlx::{AssertSqlSafe, FromRow};
use switchboard_core::Risk;

/// Where an approval request stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalStatus {
    /// Waiting for a decision.
    Pending,
    /// Allowed once.
    Approved,
    /// Allowed for the rest of the run.
    ApprovedAlways,
    /// Denied.
    Denied,
    /// Nobody decided in time (or the asking process is gone).
    Expired,
    /// Nobody could be asked (no route, channel down).
    Unavailable,
    /// The run that asked was stopped first.
    Cancelled,
}

stored_words!(ApprovalStatus, "approval status", {
    Pending => "pending",
    Approved => "approved",
    ApprovedAlways => "approved_always",
    Denied => "denied",
    Expired => "expired",
    Unavailable => "unavailable",
    Cancelled => "cancelled",
});

/// A request about to be stored.
#[derive(Debug, Clone)]
pub struct NewApproval<'a> {
    /// The request id people type (`/approve <id>`).
    pub id: &'a str,
    /// The run whose tool call waits, when it is a registry run.
    pub run_id: Option<&'a str>,
    /// The person whose message started the work that asks.
    pub requested_by: Option<&'a str>,
    /// The agent whose tool call waits.
    pub agent: &'a str,
    /// Callers of a delegated run, root first.
    pub caller_chain: &'a [String],
    /// The tool to run.
    pub tool: &'a str,
    /// Its arguments, redacted.
    pub summary: &'a str,
    /// How risky the call is.
    pub risk: Risk,
    /// The approver channel the prompt went to.
    pub channel: Option<&'a str>,
    /// The chat of the prompt.
    pub chat: Option<&'a str>,
    /// The thread of the prompt, if any.
    pub thread: Option<&'a str>,
    /// When the request expires (Unix ms).
    pub deadline_at: i64,
    /// Who may decide it, so that any instance can check a decision typed
    /// to it.
    pub approvers: &'a [String],
    /// How many different people must allow it (1 or 2).
    pub approvals_required: i64,
}

/// A stored request and its outcome.
#[derive(Debug, Clone, FromRow)]
pub struct ApprovalRow {
    /// The request id people type (`/approve <id>`).
    pub id: String,
    /// The registry run whose tool call waits (none for a person's turn).
    pub run_id: Option<String>,
    /// The agent whose tool call waits.
    pub agent: String,
    /// Callers of a delegated run, root first.
    #[sqlx(try_from = "crate::list::StoredChain")]
    pub caller_chain: Vec<String>,
    /// The tool to run.
    pub tool: String,
    /// Its arguments, redacted.
    pub summary: String,
    /// How risky the call is (a stored word no build knows reads as high).
    #[sqlx(try_from = "crate::stored_words::StoredRisk")]
    pub risk: Risk,
    /// The approver channel the prompt went to.
    pub channel: Option<String>,
    /// The chat of the prompt.
    pub chat: Option<String>,
    /// The thread of the prompt, if any.
    pub thread: Option<String>,
    /// The posted prompt's message id (to edit it).
    pub prompt_message: Option<String>,
    /// Where it stands.
    #[sqlx(try_from = "String")]
    pub status: ApprovalStatus,
    /// When the request expires (Unix ms).
    pub deadline_at: i64,
    /// When it was asked (Unix ms).
    pub created_at: i64,
    /// When it was decided or expired (Unix ms).
    pub decided_at: Option<i64>,
    /// Who decided.
    pub decided_by: Option<String>,
    /// Where the decision came from (a chat address).
    pub decided_from: Option<String>,
    /// The reason given with a denial.
    pub reason: Option<String>,
    /// Who may decide it (empty for rows older than the column).
    #[sqlx(try_from = "crate::list::StoredList")]
    pub approvers: Vec<String>,
    /// The person whose message started the work that asks.
    pub requested_by: Option<String>,
    /// How many different people must allow it.
    pub approvals_required: i64,
    /// How many have (see `approval_votes`).
    pub allows: i64,
}

pub(crate) const COLUMNS: &str =
    "id, run_id, agent, caller_chain, tool, summary, risk, channel, chat, thread, prompt_message, status,
     deadline_at, created_at, decided_at, decided_by, decided_from, reason, approvers, requested_by,
     approvals_required, allows";

/// How a pending request ended: the new status, who decided and from
/// where (none when nobody did: expiry, cancellation), and why.
#[derive(Debug, Clone, Copy)]
pub struct ApprovalEnd<'a> {
    /// The status it ends in.
    pub status: ApprovalStatus,
    /// The person who decided.
    pub by: Option<&'a str>,
    /// Where they decided (a chat address, `cli`, `console`).
    pub from: Option<&'a str>,
    /// Why, when said.
    pub reason: Option<&'a str>,
}

impl<'a> ApprovalEnd<'a> {
    /// An end nobody decided (expired, cancelled, unavailable).
    pub fn unattended(status: ApprovalStatus, reason: &'a str) -> Self {
        Self {
            status,
            by: None,
            from: None,
            reason: Some(reason),
        }
    }
}

impl<'s> Approvals<'s> {
    /// Record a new pending request.
    pub async fn insert(self, a: &NewApproval<'_>) -> Result<(), StoreError> {
        self.0.exec(
            Stmt::new(
                "INSERT INTO approvals (id, run_id, agent, caller_chain, tool, summary, risk, channel, chat, thread,
                                    status, deadline_at, created_at, instance_id, approvers, requested_by,
                                    approvals_required)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'pending', $11, $12, $13, $14, $15, $16)",
            )
            .bind(a.id)
            .bind(a.run_id)
            .bind(a.agent)
            .bind(crate::list::encode(a.caller_chain))
            .bind(a.tool)
            .bind(a.summary)
            .bind(a.risk.as_str())
            .bind(a.channel)
            .bind(a.chat)
            .bind(a.thread)
            .bind(a.deadline_at)
            .bind(self.0.now_ms())
            .bind(self.0.instance_id())
            .bind(crate::list::encode(a.approvers))
            .bind(a.requested_by)
            .bind(a.approvals_required),
        )
        .await?;
        self.0.changed(crate::Change::Approval(a.id.to_string()));
        Ok(())
    }

    /// Remember where the prompt of request `id` was posted.
    pub async fn set_prompt(self, id: &str, prompt_message: &str) -> Result<(), StoreError> {
        self.0
            .exec(
                Stmt::new("UPDATE approvals SET prompt_message = $1 WHERE id = $2")
                    .bind(prompt_message)
                    .bind(id),
            )
            .await?;
        Ok(())
    }

    /// Record how a pending request ended. Returns false when it was no
    /// longer pending (someone else decided first).
    pub async fn decide(self, id: &str, end: &ApprovalEnd<'_>) -> Result<bool, StoreError> {
        let done = self
            .0
            .exec(
                Stmt::new(
                    "UPDATE approvals SET status = $1, decided_at = $2, decided_by = $3, decided_from = $4, reason = $5
             WHERE id = $6 AND status = 'pending'",
                )
                .bind(end.status.as_str())
                .bind(self.0.now_ms())
                .bind(end.by)
                .bind(end.from)
                .bind(end.reason)
                .bind(id),
            )
            .await?;
        self.0.changed(crate::Change::Approval(id.to_string()));
        Ok(done == 1)
    }

    /// Request `id`, if stored.
    pub async fn get(self, id: &str) -> Result<Option<ApprovalRow>, StoreError> {
        Ok(read!(self.0, |p| sqlx::query_as::<_, ApprovalRow>(AssertSqlSafe(
            format!("SELECT {COLUMNS} FROM approvals WHERE id = $1")
        ))
        .bind(id)
        .fetch_optional(p)
        .await)?)
    }

    /// Requests still waiting for a decision, oldest first.
    pub async fn pending(self) -> Result<Vec<ApprovalRow>, StoreError> {
        Ok(read!(self.0, |p| sqlx::query_as::<_, ApprovalRow>(AssertSqlSafe(
            format!("SELECT {COLUMNS} FROM approvals WHERE status = 'pending' ORDER BY created_at, id")
        ))
        .fetch_all(p)
        .await)?)
    }

    /// The most recent requests, newest first.
    pub async fn recent(self, limit: i64) -> Result<Vec<ApprovalRow>, StoreError> {
        Ok(read!(self.0, |p| sqlx::query_as::<_, ApprovalRow>(AssertSqlSafe(
            format!("SELECT {COLUMNS} FROM approvals ORDER BY created_at DESC, id LIMIT {limit}",)
        ))
        .fetch_all(p)
        .await)?)
    }
}

/// Approval requests and decisions (`approvals`).
#[derive(Clone, Copy)]
pub struct Approvals<'s>(&'s Store);

impl Store {
    /// Approval requests and decisions (`approvals`).
    pub fn approvals(&self) -> Approvals<'_> {
        Approvals(self)
    }
}
