//! The fallback chain ("Reliable"): the requested provider first, then each
//! of its `fallbacks` in order. The answer says who actually served it.

use super::{ChatRequest, ChatResponse, Provider, ProviderError};
use std::sync::Arc;
use switchboard_config::ProviderKind;

/// Which provider answered, and whether that was a fallback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Served {
    pub requested_name: String,
    pub requested_kind: ProviderKind,
    pub requested_model: String,
    pub name: String,
    pub kind: ProviderKind,
    pub model: String,
}

impl Served {
    pub fn fell_back(&self) -> bool {
        self.requested_name != self.name
    }
}

#[derive(Clone)]
pub struct ProviderChain {
    links: Vec<Arc<dyn Provider>>,
}

impl ProviderChain {
    /// `links[0]` is the requested provider; the rest are its fallbacks.
    pub fn new(links: Vec<Arc<dyn Provider>>) -> Self {
        assert!(!links.is_empty(), "a provider chain needs a provider");
        Self { links }
    }

    pub fn primary(&self) -> &Arc<dyn Provider> {
        &self.links[0]
    }

    pub async fn chat(&self, req: &ChatRequest<'_>) -> Result<(ChatResponse, Served), ProviderError> {
        let first = &self.links[0];
        let mut failures = Vec::new();
        for link in &self.links {
            match link.chat(req).await {
                Ok(resp) => {
                    if !failures.is_empty() {
                        tracing::warn!(
                            requested = first.name(),
                            served = link.name(),
                            "served by a fallback provider"
                        );
                    }
                    let served = Served {
                        requested_name: first.name().to_string(),
                        requested_kind: first.kind(),
                        requested_model: first.model().to_string(),
                        name: link.name().to_string(),
                        kind: link.kind(),
                        model: link.model().to_string(),
                    };
                    return Ok((resp, served));
                }
                Err(e) => {
                    tracing::warn!(provider = link.name(), error = %e, "provider failed");
                    failures.push(e);
                }
            }
        }
        if failures.len() == 1 {
            return Err(failures.remove(0));
        }
        Err(ProviderError::AllFailed(
            failures.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("; "),
        ))
    }
}
