//! The start of a turn: the conversation so far, compacted first when it
//! no longer fits the model's context (see `crate::compaction`).

use super::history::{self, Loaded};
use super::{AgentRun, TurnError};
use crate::compaction::{Compactor, KEEP_SHARE, cut_for_room, summariser, summary_cap, system_with};
use crate::message::ChatMessage;
use crate::provider::estimate;

impl AgentRun {
    /// The messages the first model call sees (system prompt with the
    /// conversation's summary, the session's history unless it starts
    /// fresh), and the person's messages of this turn to send and store
    /// (the earlier ones of a merged burst, then `user_text`).
    pub(super) async fn opening(&self, user_text: &str) -> Result<(Vec<ChatMessage>, Vec<ChatMessage>), TurnError> {
        let mut user = ChatMessage::user(user_text);
        user.images.clone_from(&self.images);
        let mut loaded = Loaded::default();
        if !self.ctx.scope.fresh_session {
            loaded = history::load(&self.ctx.store, &self.ctx.session_key).await?;
            self.compact_if_needed(&mut loaded, &user).await;
        }
        let system = match &loaded.summary {
            Some(summary) => system_with(&self.system_prompt, summary),
            None => self.system_prompt.clone(),
        };
        let mut messages = Vec::with_capacity(loaded.messages.len() + 2);
        if !system.is_empty() {
            messages.push(ChatMessage::system(system));
        }
        messages.extend(loaded.messages);
        let asked = self
            .earlier
            .iter()
            .map(|t| ChatMessage::user(t.as_str()))
            .chain(std::iter::once(user))
            .collect();
        Ok((messages, asked))
    }

    /// When the conversation and `user` no longer fit the model's window,
    /// summarise its oldest part. A failure is logged and the turn goes
    /// on (the history is then cut to fit, as without compaction).
    async fn compact_if_needed(&self, loaded: &mut Loaded, user: &ChatMessage) {
        let agent = &self.agent.config;
        if !agent.compaction {
            return;
        }
        let primary = self.chain.primary();
        primary.learn_window().await;
        let limits = primary.limits();
        let (Some(budget), Some(window)) = (limits.budget(1.0), limits.window()) else {
            return;
        };
        // The system prompt counted as the system message it becomes,
        // without copying it for every turn.
        let system =
            estimate(std::slice::from_ref(&ChatMessage::system(String::new()))) + self.system_prompt.len() as u64 / 4;
        let fixed = limits.corrected(system) + limits.tokens(std::slice::from_ref(user), &self.offered_specs());
        let summary = loaded
            .summary
            .as_deref()
            .map_or(0, |s| limits.corrected(s.len() as u64 / 4));
        let history = limits.tokens(&loaded.messages, &[]);
        if fixed + summary + history <= budget {
            return;
        }
        let max_tokens = summary_cap(Some(window));
        let keep = (budget.saturating_sub(fixed + max_tokens) as f64 * KEEP_SHARE) as u64;
        let cut = cut_for_room(&loaded.messages, keep, limits);
        if cut == 0 {
            return;
        }
        let chain = match summariser(&self.providers, agent, &self.chain) {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(error = %e, "the compaction provider is not usable; the history is cut instead");
                return;
            }
        };
        let compactor = Compactor {
            config: &self.config,
            store: &self.ctx.store,
            chain,
            cost_chain: &self.ctx.scope.cost_chain,
            session_key: &self.ctx.session_key,
        };
        let done = tokio::select! {
            _ = self.ctx.cancel.cancelled() => return,
            r = compactor.compact(loaded, cut, None, max_tokens) => r,
        };
        if let Err(e) = done {
            tracing::warn!(error = %e, "compaction failed; the history is cut to fit instead");
        }
    }
}
