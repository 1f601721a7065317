//! `[cost]`: spend tracking and limits.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `[cost]`: spend tracking and limits.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(default)]
pub struct CostConfig {
    /// Record spend and enforce the limits (default false).
    pub enabled: bool,
    /// Keep the ledger per agent as well (default true).
    pub track_per_agent: bool,
    /// No model call past this spend in a UTC day (default 10.0).
    pub daily_limit_usd: f64,
    /// The same per month (default 100.0).
    pub monthly_limit_usd: f64,
    /// USD per million tokens, keyed by provider name or model name.
    pub prices: BTreeMap<String, Price>,
}

impl Default for CostConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            track_per_agent: true,
            daily_limit_usd: 10.0,
            monthly_limit_usd: 100.0,
            prices: BTreeMap::new(),
        }
    }
}

/// USD per million tokens.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// USD per million prompt tokens (default 0).
    #[serde(default)]
    pub input: f64,
    /// USD per million answer tokens (default 0).
    #[serde(default)]
    pub output: f64,
    /// USD per million prompt tokens the provider served from its cache
    /// (default: the `input` price, so spend is never under-counted).
    #[serde(default)]
    pub cached_input: Option<f64>,
}

impl CostConfig {
    /// The price for a provider (by name) or its model, if configured.
    pub fn price_for(&self, provider: &str, model: &str) -> Price {
        self.prices
            .get(provider)
            .or_else(|| self.prices.get(model))
            .copied()
            .unwrap_or_default()
    }
}

impl Price {
    /// Cost in micro-dollars of one call.
    /// `cached_tokens` are part of `input_tokens`, priced at `cached_input`.
    pub fn cost_micros(&self, input_tokens: u64, cached_tokens: u64, output_tokens: u64) -> u64 {
        // USD per million tokens == micro-dollars per token.
        let cached = cached_tokens.min(input_tokens);
        let fresh = (input_tokens - cached) as f64 * self.input;
        let reused = cached as f64 * self.cached_input.unwrap_or(self.input);
        (fresh + reused + self.output * output_tokens as f64).round() as u64
    }
}
