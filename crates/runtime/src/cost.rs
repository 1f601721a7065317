//! Metering model calls into the cost ledger and enforcing spend limits.

use crate::message::Usage;
use switchboard_config::Config;
use switchboard_store::{Store, StoreError, now_ms, utc_day};

/// Why a model call may not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BudgetExceeded(pub String);

/// Record one call's usage under `agent`; returns its cost in micro-dollars.
pub async fn record(
    config: &Config,
    store: &Store,
    agent: &str,
    provider: &str,
    model: &str,
    usage: Usage,
) -> Result<u64, StoreError> {
    let micros = config
        .cost
        .price_for(provider, model)
        .cost_micros(usage.input_tokens, usage.output_tokens);
    let day = utc_day(now_ms());
    store
        .record_cost(
            agent,
            &day,
            usage.input_tokens as i64,
            usage.output_tokens as i64,
            micros as i64,
        )
        .await?;
    Ok(micros)
}

/// Check the global `[cost]` limits and the agent's own daily cap before
/// calling a provider.
pub async fn check(
    config: &Config,
    store: &Store,
    agent: &str,
    runtime_profile: &str,
) -> Result<(), CheckError> {
    let day = utc_day(now_ms());
    let cap_cents = config
        .runtime_profiles
        .get(runtime_profile)
        .map(|p| p.max_cost_per_day_cents)
        .unwrap_or(0);
    if cap_cents > 0 {
        let spent = store.agent_cost(agent, &day).await?.cost_micros as u64;
        if spent >= cap_cents * 10_000 {
            return Err(CheckError::Budget(BudgetExceeded(format!(
                "agent '{agent}' reached its daily cost cap of {cap_cents} cents ([runtime_profiles.{runtime_profile}].max_cost_per_day_cents); it resets at UTC midnight"
            ))));
        }
    }
    if !config.cost.enabled {
        return Ok(());
    }
    let today = store.total_cost(&day).await?.cost_micros as f64 / 1e6;
    if today >= config.cost.daily_limit_usd {
        return Err(CheckError::Budget(BudgetExceeded(format!(
            "the daily cost limit of ${:.2} is reached ([cost].daily_limit_usd); it resets at UTC midnight",
            config.cost.daily_limit_usd
        ))));
    }
    let month = store.total_cost(&day[..7]).await?.cost_micros as f64 / 1e6;
    if month >= config.cost.monthly_limit_usd {
        return Err(CheckError::Budget(BudgetExceeded(format!(
            "the monthly cost limit of ${:.2} is reached ([cost].monthly_limit_usd)",
            config.cost.monthly_limit_usd
        ))));
    }
    Ok(())
}

#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error(transparent)]
    Budget(#[from] BudgetExceeded),
    #[error(transparent)]
    Store(#[from] StoreError),
}
