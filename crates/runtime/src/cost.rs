//! Metering model calls into the cost ledger and enforcing spend limits.

use crate::message::Usage;
use switchboard_config::Config;
use switchboard_store::{Store, StoreError, now_ms, utc_day};

/// Why a model call may not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BudgetExceeded(pub String);

/// Why a model call may not be made.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// A spend limit is reached.
    #[error(transparent)]
    Budget(#[from] BudgetExceeded),
    /// The ledger could not be read.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Record one call's usage under the spender (`cost_chain[0]`) and count it
/// against every cap in `cost_chain`; returns its cost in micro-dollars.
pub async fn record(
    config: &Config,
    store: &Store,
    cost_chain: &[String],
    provider: &str,
    model: &str,
    usage: Usage,
) -> Result<u64, StoreError> {
    let Some(agent) = cost_chain.first() else {
        return Ok(0);
    };
    let micros = config.cost.price_for(provider, model).cost_micros(
        usage.input_tokens,
        usage.cached_tokens,
        usage.output_tokens,
    );
    switchboard_telemetry::metrics::model_usage(provider, usage.input_tokens, usage.output_tokens, micros);
    // How much of each prompt the server had cached (docs/models.md).
    tracing::info!(
        provider,
        prompt_tokens = usage.input_tokens,
        cached_tokens = usage.cached_tokens,
        answer_tokens = usage.output_tokens,
        "model call"
    );
    let day = utc_day(now_ms());
    let usage_row = switchboard_store::CostTotals {
        calls: 1,
        tokens_in: usage.input_tokens as i64,
        tokens_out: usage.output_tokens as i64,
        cost_micros: micros as i64,
    };
    store.costs().record(agent, provider, &day, usage_row).await?;
    if micros > 0 {
        store.costs().attribute(cost_chain, &day, micros as i64).await?;
    }
    Ok(micros)
}

/// Check, before calling a provider, the daily cap of every agent in
/// `cost_chain` (the spender and its bounded ancestors: a descendant's spend
/// counts against each of them) and the global `[cost]` limits.
pub async fn check(config: &Config, store: &Store, cost_chain: &[String]) -> Result<(), CheckError> {
    let day = utc_day(now_ms());
    for agent in cost_chain {
        let cap_cents = config.runtime_profile_of(agent).max_cost_per_day_cents;
        if cap_cents == 0 {
            continue;
        }
        let spent = store.costs().attributed(agent, &day).await? as u64;
        if spent >= cap_cents * 10_000 {
            let profile = config
                .agents
                .get(agent)
                .map(|a| a.runtime_profile.as_str())
                .unwrap_or("default");
            return Err(BudgetExceeded(format!(
                "agent '{agent}' reached its daily cost cap of {cap_cents} cents ([runtime_profiles.{profile}].max_cost_per_day_cents); it resets at UTC midnight"
            ))
            .into());
        }
    }
    if !config.cost.enabled {
        return Ok(());
    }
    let today = store.costs().total(&day).await?.cost_micros as f64 / 1e6;
    if today >= config.cost.daily_limit_usd {
        return Err(BudgetExceeded(format!(
            "the daily cost limit of ${:.2} is reached ([cost].daily_limit_usd); it resets at UTC midnight",
            config.cost.daily_limit_usd
        ))
        .into());
    }
    let month = store.costs().total(&day[..7]).await?.cost_micros as f64 / 1e6;
    if month >= config.cost.monthly_limit_usd {
        return Err(BudgetExceeded(format!(
            "the monthly cost limit of ${:.2} is reached ([cost].monthly_limit_usd)",
            config.cost.monthly_limit_usd
        ))
        .into());
    }
    Ok(())
}
