//! The daily cost ledgers, per agent and per provider, in micro-dollars.

use crate::stmt::Stmt;
use crate::{Store, StoreError};
use sqlx::{AssertSqlSafe, FromRow};

/// Spend over a period.
#[derive(Debug, Clone, Default, FromRow, PartialEq, Eq)]
pub struct CostTotals {
    /// Model calls.
    pub calls: i64,
    /// Prompt tokens.
    pub tokens_in: i64,
    /// Answer tokens.
    pub tokens_out: i64,
    /// Spend in micro-dollars.
    pub cost_micros: i64,
}

/// The UTC day (`YYYY-MM-DD`) of a Unix-millisecond time.
pub fn utc_day(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!("{y:04}-{m:02}-{d:02}")
}

/// Add one call's usage to `table`'s row of (`key`, day).
macro_rules! upsert {
    ($table:literal, $key:literal) => {
        concat!(
            "INSERT INTO ",
            $table,
            " (",
            $key,
            ", day, calls, tokens_in, tokens_out, cost_micros) VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (",
            $key,
            ", day) DO UPDATE SET calls = ",
            $table,
            ".calls + excluded.calls,
               tokens_in = ",
            $table,
            ".tokens_in + excluded.tokens_in,
               tokens_out = ",
            $table,
            ".tokens_out + excluded.tokens_out,
               cost_micros = ",
            $table,
            ".cost_micros + excluded.cost_micros"
        )
    };
}

impl<'s> Costs<'s> {
    /// Add one model call's usage to `agent`'s ledger and `provider`'s
    /// for `day` (one transaction).
    pub async fn record(self, agent: &str, provider: &str, day: &str, usage: CostTotals) -> Result<(), StoreError> {
        let add = |sql: &'static str, who: &str| {
            Stmt::new(sql)
                .bind(who.to_string())
                .bind(day.to_string())
                .bind(usage.calls)
                .bind(usage.tokens_in)
                .bind(usage.tokens_out)
                .bind(usage.cost_micros)
        };
        self.0
            .exec_all(vec![
                add(upsert!("cost_ledger", "agent"), agent),
                add(upsert!("provider_cost", "provider"), provider),
            ])
            .await?;
        Ok(())
    }

    /// Totals per agent (own spend) and per provider for the days whose
    /// `YYYY-MM-DD` starts with `prefix` (a day, or a month `YYYY-MM`).
    pub async fn breakdown(
        self,
        prefix: &str,
    ) -> Result<(Vec<(String, CostTotals)>, Vec<(String, CostTotals)>), StoreError> {
        let like = format!("{prefix}%");
        let sum = |table: &str, key: &str| {
            format!(
                "SELECT {key}, CAST(SUM(calls) AS BIGINT), CAST(SUM(tokens_in) AS BIGINT),
                        CAST(SUM(tokens_out) AS BIGINT), CAST(SUM(cost_micros) AS BIGINT)
                 FROM {table} WHERE day LIKE $1 GROUP BY {key} ORDER BY {key}"
            )
        };
        let (agents_sql, providers_sql) = (sum("cost_ledger", "agent"), sum("provider_cost", "provider"));
        let agents: Vec<(String, i64, i64, i64, i64)> =
            read!(self.0, |p| sqlx::query_as(AssertSqlSafe(agents_sql.clone()))
                .bind(&like)
                .fetch_all(p)
                .await)?;
        let providers: Vec<(String, i64, i64, i64, i64)> =
            read!(self.0, |p| sqlx::query_as(AssertSqlSafe(providers_sql.clone()))
                .bind(&like)
                .fetch_all(p)
                .await)?;
        let totals = |rows: Vec<(String, i64, i64, i64, i64)>| {
            rows.into_iter()
                .map(|(k, calls, tokens_in, tokens_out, cost_micros)| {
                    (
                        k,
                        CostTotals {
                            calls,
                            tokens_in,
                            tokens_out,
                            cost_micros,
                        },
                    )
                })
                .collect()
        };
        Ok((totals(agents), totals(providers)))
    }

    /// Spend counted against each agent's cap (its own and its bounded
    /// descendants') for the days starting with `prefix`.
    pub async fn attributed_breakdown(self, prefix: &str) -> Result<Vec<(String, i64)>, StoreError> {
        let like = format!("{prefix}%");
        Ok(read!(self.0, |p| {
            sqlx::query_as(
            "SELECT agent, CAST(SUM(cost_micros) AS BIGINT) FROM cost_attribution WHERE day LIKE $1 GROUP BY agent ORDER BY agent"
        )
        .bind(&like)
        .fetch_all(p)
        .await
        })?)
    }

    /// One agent's totals for a day.
    pub async fn of_agent(self, agent: &str, day: &str) -> Result<CostTotals, StoreError> {
        Ok(read!(self.0, |p| sqlx::query_as::<_, CostTotals>(
            "SELECT calls, tokens_in, tokens_out, cost_micros FROM cost_ledger WHERE agent = $1 AND day = $2",
        )
        .bind(agent)
        .bind(day)
        .fetch_optional(p)
        .await)?
        .unwrap_or_default())
    }

    /// Every agent's totals for days whose name starts with `prefix`
    /// (`2026-11-30` for a day, `2026-11` for a month).
    pub async fn total(self, prefix: &str) -> Result<CostTotals, StoreError> {
        Ok(read!(self.0, |p| sqlx::query_as::<_, CostTotals>(
            "SELECT CAST(COALESCE(SUM(calls), 0) AS BIGINT) AS calls,
                    CAST(COALESCE(SUM(tokens_in), 0) AS BIGINT) AS tokens_in,
                    CAST(COALESCE(SUM(tokens_out), 0) AS BIGINT) AS tokens_out,
                    CAST(COALESCE(SUM(cost_micros), 0) AS BIGINT) AS cost_micros
             FROM cost_ledger WHERE day LIKE $1",
        )
        .bind(format!("{prefix}%"))
        .fetch_one(p)
        .await)?)
    }
}

impl<'s> Costs<'s> {
    /// Count `cost_micros` against the daily cap of each agent in `agents`
    /// (the spender and its bounded ancestors).
    pub async fn attribute(self, agents: &[String], day: &str, cost_micros: i64) -> Result<(), StoreError> {
        for agent in agents {
            self.0.exec(Stmt::new(
                "INSERT INTO cost_attribution (agent, day, cost_micros) VALUES ($1, $2, $3)
                 ON CONFLICT (agent, day) DO UPDATE SET cost_micros = cost_attribution.cost_micros + excluded.cost_micros",
            )
            .bind(agent)
            .bind(day)
            .bind(cost_micros)).await?;
        }
        Ok(())
    }

    /// Spend counted against `agent`'s cap on `day`.
    pub async fn attributed(self, agent: &str, day: &str) -> Result<i64, StoreError> {
        Ok(read!(self.0, |p| sqlx::query_scalar::<_, i64>(
            "SELECT cost_micros FROM cost_attribution WHERE agent = $1 AND day = $2"
        )
        .bind(agent)
        .bind(day)
        .fetch_optional(p)
        .await)?
        .unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::utc_day;

    #[test]
    fn utc_days() {
        assert_eq!(utc_day(0), "1970-01-01");
        assert_eq!(utc_day(1_795_996_800_000), "2026-11-30");
        assert_eq!(utc_day(1_795_996_800_000 - 1), "2026-11-29");
        assert_eq!(utc_day(951_782_400_000), "2000-02-29");
    }
}

/// The cost ledger (`cost_ledger`, `cost_attribution`).
#[derive(Clone, Copy)]
pub struct Costs<'s>(&'s Store);

impl Store {
    /// The cost ledger (`cost_ledger`, `cost_attribution`).
    pub fn costs(&self) -> Costs<'_> {
        Costs(self)
    }
}
