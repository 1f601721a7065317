//! The run tree: every child run (spawn_subagent, delegate, sessions_spawn,
//! cron). This module holds what start-up needs; the delegation and
//! subagent issues extend it.

use crate::{Store, StoreError, now_ms};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunStatus {
    Running,
    Completed,
    Failed,
    Cancelled,
    TimedOut,
    Lost,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
            Self::TimedOut => "timed_out",
            Self::Lost => "lost",
        }
    }
}

impl Store {
    /// At start: rows an earlier process left `running` become `lost`.
    /// Returns their ids so they can be announced.
    pub async fn mark_running_runs_lost(&self) -> Result<Vec<String>, StoreError> {
        let ids: Vec<String> = sqlx::query_scalar("SELECT id FROM runs WHERE status = 'running'")
            .fetch_all(self.pool())
            .await?;
        sqlx::query(
            "UPDATE runs SET status = 'lost', ended_at = $1, error = 'the gateway stopped while this run was active'
             WHERE status = 'running'",
        )
        .bind(now_ms())
        .execute(self.pool())
        .await?;
        Ok(ids)
    }
}
