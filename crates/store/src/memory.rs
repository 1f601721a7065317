//! Agent memory rows, keyed by agent alias.

use crate::stmt::Stmt;
use crate::{Store, StoreError};
use sqlx::{AssertSqlSafe, FromRow};

/// One stored memory.
#[derive(Debug, Clone, FromRow, PartialEq, Eq)]
pub struct MemoryRow {
    /// The agent that stored it.
    pub agent: String,
    /// Its key.
    pub key: String,
    /// What was stored.
    pub content: String,
    /// When it was last written (Unix ms).
    pub updated_at: i64,
}

impl<'s> Memory<'s> {
    /// Store or replace `agent`'s memory under `key`.
    pub async fn put(self, agent: &str, key: &str, content: &str) -> Result<(), StoreError> {
        let now = self.0.now_ms();
        self.0
            .exec(
                Stmt::new(
                    "INSERT INTO memories (agent, key, content, created_at, updated_at) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (agent, key) DO UPDATE SET content = excluded.content, updated_at = excluded.updated_at",
                )
                .bind(agent)
                .bind(key)
                .bind(content)
                .bind(now)
                .bind(now),
            )
            .await?;
        Ok(())
    }

    /// Rows of the given agents whose key or content contains `query`
    /// (case-insensitive; empty query = all), newest first.
    pub async fn recall(self, agents: &[String], query: &str, limit: i64) -> Result<Vec<MemoryRow>, StoreError> {
        if agents.is_empty() {
            return Ok(Vec::new());
        }
        let placeholders: Vec<String> = (0..agents.len()).map(|i| format!("${}", i + 2)).collect();
        let sql = format!(
            "SELECT agent, key, content, updated_at FROM memories
             WHERE (LOWER(key) LIKE $1 OR LOWER(content) LIKE $1) AND agent IN ({})
             ORDER BY updated_at DESC, id DESC LIMIT {limit}",
            placeholders.join(", "),
        );
        let pattern = format!("%{}%", escape_like(&query.to_lowercase()));
        Ok(read!(self.0, |p| {
            let mut q = sqlx::query_as::<_, MemoryRow>(AssertSqlSafe(sql)).bind(pattern);
            for a in agents {
                q = q.bind(a.as_str());
            }
            q.fetch_all(p).await
        })?)
    }
}

/// LIKE has no portable escape across both backends without an ESCAPE
/// clause; wildcard characters in queries are rare, so they match literally
/// enough by being dropped.
fn escape_like(s: &str) -> String {
    s.replace(['%', '_'], "")
}

/// Agent memory (`memory`).
#[derive(Clone, Copy)]
pub struct Memory<'s>(&'s Store);

impl Store {
    /// Agent memory (`memory`).
    pub fn memory(&self) -> Memory<'_> {
        Memory(self)
    }
}
