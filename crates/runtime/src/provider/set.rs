//! Every configured provider, built once, and the chains agents use.

use super::{Provider, ProviderChain, ProviderError, build_provider};
use std::collections::BTreeMap;
use std::sync::Arc;
use switchboard_config::Config;

/// Configured providers by name. A provider that cannot be built (say its
/// `env:` key is unset) keeps its error, reported when someone uses it.
pub struct ProviderSet {
    built: BTreeMap<String, Result<Arc<dyn Provider>, ProviderError>>,
    fallbacks: BTreeMap<String, Vec<String>>,
}

impl ProviderSet {
    /// Every configured provider.
    pub fn from_config(config: &Config) -> Self {
        let built = config
            .providers
            .iter()
            .map(|(name, c)| (name.clone(), build_provider(name, c)))
            .collect();
        let fallbacks = config
            .providers
            .iter()
            .map(|(name, c)| (name.clone(), c.fallbacks.clone()))
            .collect();
        Self { built, fallbacks }
    }

    /// Their names.
    pub fn names(&self) -> Vec<String> {
        self.built.keys().cloned().collect()
    }

    /// `name` followed by its usable fallbacks.
    pub fn chain_for(&self, name: &str) -> Result<ProviderChain, ProviderError> {
        let primary = match self.built.get(name) {
            Some(Ok(p)) => p.clone(),
            Some(Err(e)) => return Err(e.clone()),
            None => {
                return Err(ProviderError::Misconfigured(
                    name.to_string(),
                    "no such provider".into(),
                ));
            }
        };
        let mut links = vec![primary];
        for f in self.fallbacks.get(name).into_iter().flatten() {
            match self.built.get(f) {
                Some(Ok(p)) => links.push(p.clone()),
                Some(Err(e)) => {
                    tracing::warn!(provider = %f, error = %e, "fallback provider unusable; skipped");
                }
                None => {}
            }
        }
        Ok(ProviderChain::new(links))
    }
}
