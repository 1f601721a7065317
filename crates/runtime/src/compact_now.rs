//! `/compact [focus]`: summarise a conversation now, keeping its last
//! exchange as it is.

use crate::Runtime;
use crate::agent::TurnError;
use crate::compaction::{CompactError, Compacted, Compactor, cut_keeping_last_turn, summariser, summary_cap};

impl Runtime {
    /// Compact `session_key` of `agent` now; `None` when there is nothing
    /// before its last exchange to compact.
    pub async fn compact(
        &self,
        agent: &str,
        session_key: &str,
        focus: Option<&str>,
    ) -> Result<Option<Compacted>, TurnError> {
        // One snapshot of the rules, the agent looked up in it once.
        let rules = self.core().rules();
        let resolved = rules
            .agent(agent)
            .ok_or_else(|| TurnError::UnknownAgent(agent.into()))?;
        if !resolved.config.compaction {
            return Err(CompactError::Off(agent.to_string()).into());
        }
        let config = &rules.config;
        let providers = &rules.providers;
        let conversation = providers.chain_for(&self.provider_under(config, resolved, session_key).await?)?;
        let chain = summariser(providers, &resolved.config, &conversation)?;
        let mut loaded = crate::agent::history::load(self.store(), session_key).await?;
        let cut = cut_keeping_last_turn(&loaded.messages);
        if cut == 0 {
            return Ok(None);
        }
        let primary = conversation.primary();
        primary.learn_window().await;
        let max_tokens = summary_cap(primary.limits().window());
        let cost_chain = [agent.to_string()];
        let compactor = Compactor {
            config,
            store: self.store(),
            chain,
            cost_chain: &cost_chain,
            session_key,
        };
        Ok(Some(compactor.compact(&mut loaded, cut, focus, max_tokens).await?))
    }
}
