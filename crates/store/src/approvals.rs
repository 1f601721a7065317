//! Approval requests and decisions: the audit trail of who allowed what.

use crate::stmt::Stmt;
use crate::{Store, StoreError, now_ms};
use sqlx::{AssertSqlSafe, FromRow};

/// Where an approval request stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalStatus {
    Pending,
    Approved,
    ApprovedAlways,
    Denied,
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
    pub id: &'a str,
    pub run_id: Option<&'a str>,
    pub agent: &'a str,
    pub caller_chain: &'a str,
    pub tool: &'a str,
    pub summary: &'a str,
    pub risk: &'a str,
    pub channel: Option<&'a str>,
    pub chat: Option<&'a str>,
    pub thread: Option<&'a str>,
    pub deadline_at: i64,
}

#[derive(Debug, Clone, FromRow)]
pub struct ApprovalRow {
    pub id: String,
    pub agent: String,
    pub caller_chain: String,
    pub tool: String,
    pub summary: String,
    pub risk: String,
    pub channel: Option<String>,
    pub chat: Option<String>,
    pub thread: Option<String>,
    pub prompt_message: Option<String>,
    #[sqlx(try_from = "String")]
    pub status: ApprovalStatus,
    pub deadline_at: i64,
    pub created_at: i64,
    pub decided_at: Option<i64>,
    pub decided_by: Option<String>,
    pub decided_from: Option<String>,
    pub reason: Option<String>,
}

pub(crate) const COLUMNS: &str =
    "id, agent, caller_chain, tool, summary, risk, channel, chat, thread, prompt_message, status,
     deadline_at, created_at, decided_at, decided_by, decided_from, reason";

impl Store {
    pub async fn insert_approval(&self, a: &NewApproval<'_>) -> Result<(), StoreError> {
        self.exec(
            Stmt::new(
                "INSERT INTO approvals (id, run_id, agent, caller_chain, tool, summary, risk, channel, chat, thread,
                                    status, deadline_at, created_at, instance_id)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'pending', $11, $12, $13)",
            )
            .bind(a.id)
            .bind(a.run_id)
            .bind(a.agent)
            .bind(a.caller_chain)
            .bind(a.tool)
            .bind(a.summary)
            .bind(a.risk)
            .bind(a.channel)
            .bind(a.chat)
            .bind(a.thread)
            .bind(a.deadline_at)
            .bind(now_ms())
            .bind(self.instance_id()),
        )
        .await?;
        Ok(())
    }

    pub async fn set_approval_prompt(&self, id: &str, prompt_message: &str) -> Result<(), StoreError> {
        self.exec(
            Stmt::new("UPDATE approvals SET prompt_message = $1 WHERE id = $2")
                .bind(prompt_message)
                .bind(id),
        )
        .await?;
        Ok(())
    }

    /// Record how a pending request ended. Returns false when it was no
    /// longer pending (someone else decided first).
    pub async fn decide_approval(
        &self,
        id: &str,
        status: ApprovalStatus,
        by: Option<&str>,
        from: Option<&str>,
        reason: Option<&str>,
    ) -> Result<bool, StoreError> {
        let done = self
            .exec(
                Stmt::new(
                    "UPDATE approvals SET status = $1, decided_at = $2, decided_by = $3, decided_from = $4, reason = $5
             WHERE id = $6 AND status = 'pending'",
                )
                .bind(status.as_str())
                .bind(now_ms())
                .bind(by)
                .bind(from)
                .bind(reason)
                .bind(id),
            )
            .await?;
        Ok(done == 1)
    }

    pub async fn approval(&self, id: &str) -> Result<Option<ApprovalRow>, StoreError> {
        Ok(read!(self, |p| sqlx::query_as::<_, ApprovalRow>(AssertSqlSafe(
            format!("SELECT {COLUMNS} FROM approvals WHERE id = $1")
        ))
        .bind(id)
        .fetch_optional(p)
        .await)?)
    }

    /// The most recent requests, newest first.
    pub async fn recent_approvals(&self, limit: i64) -> Result<Vec<ApprovalRow>, StoreError> {
        Ok(read!(self, |p| sqlx::query_as::<_, ApprovalRow>(AssertSqlSafe(
            format!("SELECT {COLUMNS} FROM approvals ORDER BY created_at DESC, id LIMIT $1")
        ))
        .bind(limit)
        .fetch_all(p)
        .await)?)
    }
}
