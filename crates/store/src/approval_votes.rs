//! Two-person approvals: each person's allow of a request, counted once
//! per person (`approval_votes`, and `approvals.allows` for the count).

use crate::stmt::Stmt;
use crate::{Store, StoreError};

/// One allow, about to be counted.
#[derive(Debug, Clone, Copy)]
pub struct Allow<'a> {
    /// The request.
    pub approval: &'a str,
    /// Who allowed, as one person (`person:<name>` or their id).
    pub person: &'a str,
    /// The id they allowed with.
    pub user_id: &'a str,
    /// `once` or `always`.
    pub choice: &'a str,
    /// Where (a chat address, `console`).
    pub from: &'a str,
}

/// What counting an allow did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Counted {
    /// Counted: this many people have allowed now.
    Now(i64),
    /// This person had allowed already; nothing changed.
    Again,
    /// The request no longer waits.
    NotPending,
}

/// An allow as stored.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct VoteRow {
    /// The person.
    pub person: String,
    /// The id they allowed with.
    pub user_id: String,
    /// `once` or `always`.
    pub choice: String,
}

impl Store {
    /// Count `a`: the allow and the request's count change together, and
    /// only while the request waits; a person counts once. Of two allows at
    /// once (two gateways), the second to commit sees both.
    pub async fn count_allow(&self, a: &Allow<'_>) -> Result<Counted, StoreError> {
        let now = self.now_ms();
        let vote = Stmt::new(
            "INSERT INTO approval_votes (approval_id, person, user_id, choice, voted_from, voted_at)
             SELECT $1, $2, $3, $4, $5, $6
             WHERE EXISTS (SELECT 1 FROM approvals WHERE id = $1 AND status = 'pending')
               AND NOT EXISTS (SELECT 1 FROM approval_votes WHERE approval_id = $1 AND person = $2)",
        )
        .bind(a.approval)
        .bind(a.person)
        .bind(a.user_id)
        .bind(a.choice)
        .bind(a.from)
        .bind(now)
        .required();
        let count = Stmt::new("UPDATE approvals SET allows = allows + 1 WHERE id = $1 AND status = 'pending'")
            .bind(a.approval)
            .required();
        match self.exec_all(vec![vote, count]).await {
            Ok(_) => {}
            Err(StoreError::NotChanged) => {
                let row = self.approvals().get(a.approval).await?;
                return Ok(match row {
                    Some(r) if r.status == crate::ApprovalStatus::Pending => Counted::Again,
                    _ => Counted::NotPending,
                });
            }
            Err(e) => return Err(e),
        }
        self.changed(crate::Change::Approval(a.approval.to_string()));
        let row = self.approvals().get(a.approval).await?;
        Ok(row.map_or(Counted::NotPending, |r| Counted::Now(r.allows)))
    }

    /// `a`'s person allowed request `a.approval` before through another id:
    /// their allow now stands under `a.user_id` (with its choice, place and
    /// time), while the request waits. False when it no longer waits, or
    /// they never allowed it.
    pub async fn move_allow(&self, a: &Allow<'_>) -> Result<bool, StoreError> {
        let moved = self
            .exec(
                Stmt::new(
                    "UPDATE approval_votes SET user_id = $3, choice = $4, voted_from = $5, voted_at = $6
                     WHERE approval_id = $1 AND person = $2 AND user_id <> $3
                       AND EXISTS (SELECT 1 FROM approvals WHERE id = $1 AND status = 'pending')",
                )
                .bind(a.approval)
                .bind(a.person)
                .bind(a.user_id)
                .bind(a.choice)
                .bind(a.from)
                .bind(self.now_ms()),
            )
            .await?;
        if moved > 0 {
            self.changed(crate::Change::Approval(a.approval.to_string()));
        }
        Ok(moved > 0)
    }

    /// The allows counted for request `id`, first first.
    pub async fn allows_of(&self, id: &str) -> Result<Vec<VoteRow>, StoreError> {
        Ok(read!(self, |p| sqlx::query_as::<_, VoteRow>(
            "SELECT person, user_id, choice FROM approval_votes WHERE approval_id = $1 ORDER BY voted_at, person"
        )
        .bind(id)
        .fetch_all(p)
        .await)?)
    }
}
