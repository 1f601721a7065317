//! Carrying out a compaction: summarise the part before the cut, record
//! what the summary cost, store it in the transcript, and continue with it.

use super::{CompactError, Compacted, Loaded, summarise, summary_body};
use crate::provider::{ProviderChain, estimate};
use switchboard_config::Config;
use switchboard_store::Store;

/// Who compacts, for whom, paid by whom.
pub(crate) struct Compactor<'a> {
    pub config: &'a Config,
    pub store: &'a Store,
    /// The chain that writes the summary.
    pub chain: ProviderChain,
    /// Who pays (see `cost::record`).
    pub cost_chain: &'a [String],
    pub session_key: &'a str,
}

impl Compactor<'_> {
    /// Replace `loaded.messages[..cut]` (and any earlier summary) with one
    /// summary of at most `max_tokens` tokens.
    pub(crate) async fn compact(
        &self,
        loaded: &mut Loaded,
        cut: usize,
        focus: Option<&str>,
        max_tokens: u64,
    ) -> Result<Compacted, CompactError> {
        if let Err(e) = crate::cost::check(self.config, self.store, self.cost_chain).await {
            return Err(CompactError::Budget(e.to_string()));
        }
        let part = &loaded.messages[..cut];
        let tokens_before = estimate(part) + loaded.summary.as_deref().map_or(0, |s| s.len() as u64 / 4);
        let written = summarise(&self.chain, loaded.summary.as_deref(), part, focus, max_tokens).await;
        let written = written?;
        for (served, usage) in &written.usage {
            let recorded = crate::cost::record(
                self.config,
                self.store,
                self.cost_chain,
                &served.name,
                &served.model,
                *usage,
            );
            if let Err(e) = recorded.await {
                tracing::error!(error = %e, "cost ledger write failed");
            }
        }
        if written.text.is_empty() {
            return Err(CompactError::Empty);
        }
        let upto = loaded.ids[cut - 1];
        let stored = self
            .store
            .sessions()
            .compact(self.session_key, upto, &summary_body(&written.text, cut))
            .await?;
        if !stored {
            return Err(CompactError::Overtaken);
        }
        let done = Compacted {
            replaced: cut,
            tokens_before,
            tokens_after: written.text.len() as u64 / 4,
        };
        tracing::info!(
            session = %switchboard_telemetry::traces::session_tag(self.session_key),
            replaced = done.replaced,
            tokens_before = done.tokens_before,
            tokens_after = done.tokens_after,
            "conversation compacted"
        );
        loaded.summary = Some(written.text);
        loaded.messages.drain(..cut);
        loaded.ids.drain(..cut);
        Ok(done)
    }
}
