//! The fallback chain ("Reliable"): the requested provider first, then each
//! of its `fallbacks` in order. The answer says who actually served it.
//! Each provider gets the conversation fitted to its own context (see
//! `fit`); one that answers "context exceeded" gets it cut further, once.

use super::{ChatRequest, ChatResponse, Provider, ProviderError};
use std::sync::Arc;
use switchboard_config::ProviderKind;

/// Which provider answered, and whether that was a fallback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Served {
    /// The provider the run asked for.
    pub requested_name: String,
    /// Its API.
    pub requested_kind: ProviderKind,
    /// Its model.
    pub requested_model: String,
    /// The provider that answered.
    pub name: String,
    /// Its API.
    pub kind: ProviderKind,
    /// Its model.
    pub model: String,
}

impl Served {
    /// Whether a fallback answered.
    pub fn fell_back(&self) -> bool {
        self.requested_name != self.name
    }
}

/// A provider and its fallbacks, tried in order.
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

    /// The first provider.
    pub fn primary(&self) -> &Arc<dyn Provider> {
        &self.links[0]
    }

    /// Ask each provider in turn until one answers.
    pub async fn chat(&self, req: &ChatRequest<'_>) -> Result<(ChatResponse, Served), ProviderError> {
        let first = &self.links[0];
        let mut failures = Vec::new();
        for link in &self.links {
            // Text a failing provider streamed is taken back before the
            // next one starts, so nobody sees two answers run together.
            let emitted = std::sync::atomic::AtomicBool::new(false);
            let tracked = |d: super::Delta<'_>| {
                if matches!(d, super::Delta::Text(_)) {
                    emitted.store(true, std::sync::atomic::Ordering::Relaxed);
                }
                if let Some(outer) = req.deltas {
                    (outer.0)(d);
                }
            };
            let link_req = ChatRequest {
                deltas: req.deltas.map(|_| super::Deltas(&tracked)),
                ..*req
            };
            let answer = fitted_chat(link.as_ref(), &link_req).await;
            if answer.is_err()
                && emitted.load(std::sync::atomic::Ordering::Relaxed)
                && let Some(outer) = req.deltas
            {
                (outer.0)(super::Delta::Reset);
            }
            match answer {
                Ok(resp) => {
                    super::health::answered(link.name());
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
                    super::health::failed(link.name(), &e.to_string());
                    failures.push(e);
                }
            }
        }
        if failures.len() == 1 {
            return Err(failures.remove(0));
        }
        Err(ProviderError::AllFailed(
            failures
                .iter()
                .map(std::string::ToString::to_string)
                .collect::<Vec<_>>()
                .join("; "),
        ))
    }
}

/// Share of the budget used for the one retry after a "context exceeded".
const RETRY_SHARE: f64 = 0.6;

/// One provider's answer, with the history fitted to its context.
async fn fitted_chat(link: &dyn Provider, req: &ChatRequest<'_>) -> Result<ChatResponse, ProviderError> {
    link.learn_window().await;
    let limits = link.limits();
    let mut share = 1.0;
    let mut retried = false;
    loop {
        let fitted = limits
            .budget(share)
            .and_then(|budget| limits.fit(req.messages, req.tools, budget));
        if let Some(kept) = &fitted {
            tracing::info!(
                provider = link.name(),
                kept = kept.len(),
                of = req.messages.len(),
                "history cut to fit the model's context"
            );
        }
        let request = ChatRequest {
            messages: fitted.as_deref().unwrap_or(req.messages),
            ..*req
        };
        let raw = super::fit::estimate(request.messages) + super::estimate_tools(request.tools);
        let started = std::time::Instant::now();
        let span = tracing::info_span!(
            "model_request",
            provider = link.name(),
            model = link.model(),
            outcome = tracing::field::Empty,
            input_tokens = tracing::field::Empty,
            output_tokens = tracing::field::Empty,
        );
        let answer = tracing::Instrument::instrument(link.chat(&request), span.clone()).await;
        let outcome = match &answer {
            Ok(_) => "ok",
            Err(ProviderError::ContextOverflow(..)) => "context_exceeded",
            Err(_) => "error",
        };
        span.record("outcome", outcome);
        if let Ok(resp) = &answer {
            span.record("input_tokens", resp.usage.input_tokens);
            span.record("output_tokens", resp.usage.output_tokens);
        }
        switchboard_telemetry::metrics::model_request(link.name(), outcome, started.elapsed().as_secs_f64());
        match answer {
            Ok(resp) => {
                limits.calibrate(raw, resp.usage.input_tokens);
                return Ok(resp);
            }
            Err(ProviderError::ContextOverflow(name, n_ctx)) if !retried => {
                retried = true;
                match n_ctx {
                    Some(n) => limits.set_window(n),
                    // The window was unknown: it is below what was sent.
                    None if limits.window().is_none() => {
                        let estimated = limits.corrected(raw);
                        limits.set_window(u32::try_from(estimated * 3 / 4).unwrap_or(u32::MAX).max(512));
                    }
                    None => {}
                }
                share = RETRY_SHARE;
                tracing::warn!(provider = %name, "the prompt exceeded the model's context; retrying with a shorter history");
            }
            Err(e) => return Err(e),
        }
    }
}
