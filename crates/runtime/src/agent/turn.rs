//! The tool loop of one turn.

use super::{TurnError, TurnEvent, TurnReply, history};
use crate::approval::{ApprovalBroker, RunGrants};
use crate::message::{ChatMessage, Role, ToolCall, ToolSpec, Usage};
use crate::provider::{ProviderChain, ProviderSet};
use crate::tools::{ToolContext, ToolRegistry};
use parking_lot::Mutex;
use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use switchboard_config::{Config, RiskProfile};
use tokio::sync::mpsc::UnboundedSender;
use tracing::Instrument;

/// Added under an answer that stopped at the model's output limit.
pub(super) const CUT_OFF_NOTE: &str = "…(cut off at the model's output limit)";

/// The result of a tool call whose arguments the output limit cut off.
const INCOMPLETE_CALL: &str = "Error: this tool call was cut off at the model's output limit before its arguments were complete, so it was not run. Make the call again with shorter arguments (for example, write a long file in parts with append = true).";

/// Everything one run of an agent needs. Built by the runtime per turn (and
/// per child run), so approval grants and duplicate guards never leak
/// between runs.
pub struct AgentRun {
    /// The agent it acts as, looked up once when the run was planned:
    /// its runtime profile gives the loop's limits.
    pub(crate) agent: Arc<crate::rules::AgentRules>,
    /// The configuration.
    pub config: Arc<Config>,
    /// Every configured provider (for `model_switch`).
    pub providers: Arc<ProviderSet>,
    /// The system message.
    pub system_prompt: String,
    /// The providers to call, in order.
    pub chain: ProviderChain,
    /// Sampling temperature, when set.
    pub temperature: Option<f64>,
    /// The tools offered.
    pub registry: ToolRegistry,
    /// What tools may use.
    pub ctx: Arc<ToolContext>,
    /// Who is asked for approvals.
    pub broker: Arc<dyn ApprovalBroker>,
    /// "Always (this run)" grants: fresh for every run.
    pub grants: RunGrants,
    /// The risk profile (name, rules) whose approval rules gate tool calls.
    pub approval_profile: (String, RiskProfile),
    /// Where progress events go, if anyone listens.
    pub events: Option<UnboundedSender<TurnEvent>>,
    /// The inbound message this run answers, recorded on its transcript
    /// messages (see `TurnRequest::turn`).
    pub turn: Option<String>,
    /// Pictures shown with the user message (the agent has `vision`).
    pub images: Vec<crate::message::Image>,
    /// Messages of the same person before the user message that joined
    /// this turn (see `TurnRequest::earlier`).
    pub earlier: Vec<String>,
    /// A person's turn (`Runtime::run_turn`): the session is created or
    /// touched in the same write as the user message.
    pub opens_session: bool,
    /// Late messages that may join before the model answers (see `joins`).
    pub joins: Mutex<Option<super::joins::Joins>>,
}

/// The text of the message that shows a vision agent its tools' pictures.
const PICTURES_NOTE: &str = "The pictures your tools returned (saved in the workspace as their results say):";

impl AgentRun {
    pub(crate) fn emit(&self, event: TurnEvent) {
        if let Some(tx) = &self.events {
            let _ = tx.send(event);
        }
    }

    /// Run one user message through the tool loop and return the answer.
    pub async fn run(&self, user_text: &str) -> Result<TurnReply, TurnError> {
        let span = tracing::info_span!("turn", agent_alias = %self.ctx.agent, session = %switchboard_telemetry::traces::session_tag(&self.ctx.session_key));
        self.run_inner(user_text).instrument(span).await
    }

    async fn run_inner(&self, user_text: &str) -> Result<TurnReply, TurnError> {
        let (mut messages, asked) = self.opening(user_text).await?;
        // Stored while the first model call runs (both are awaited before
        // anything else is written, so the transcript keeps its order).
        let saving: Pin<Box<dyn Future<Output = Result<(), switchboard_store::StoreError>> + Send + '_>> =
            Box::pin(self.save_asked(&asked));
        let mut opening = Some(Box::pin(futures::future::maybe_done(saving)));
        let mut joins = self.joins.lock().take();
        let turn_start = messages.len();
        messages.extend(asked.iter().cloned());
        let max_iterations = self.agent.runtime.max_tool_iterations;
        let mut specs = self.offered_specs();
        let seen = Mutex::new(HashSet::new());
        let mut chain = self.chain.clone();
        let mut usage = Usage::default();
        let mut iterations = 0u32;
        let mut tools_completed = 0u32;
        let scope = &self.ctx.scope;
        // Asked for words after an empty answer (`last_word`).
        let mut words_asked = false;
        loop {
            let offer_tools = self.offer_tools(iterations < max_iterations && !specs.is_empty() && !words_asked)?;
            self.check_budget().await?;
            let tools: &[Arc<ToolSpec>] = if offer_tools { &specs } else { &[] };
            // Tools used up: the last request asks for words (`last_word`).
            let last_word = !offer_tools && !specs.is_empty();
            let note_at = last_word.then(|| {
                messages.push(self.last_word_note(&specs));
                messages.len() - 1
            });
            let (response, served) = self
                .model_call(&chain, &mut messages, tools, &mut opening, &mut joins)
                .await?;
            if let Some(at) = note_at {
                messages.remove(at);
            }
            usage.add(response.usage);
            if let Some(p) = &scope.progress {
                p.model_call(response.usage.input_tokens, response.usage.output_tokens)
                    .await;
            }
            // The ledger write and the transcript write share a commit.
            let recorded = self.record_cost(&served, response.usage);
            if self.ask_for_words(&response, offer_tools && iterations > 0 && !words_asked) {
                words_asked = true;
                recorded.await;
                continue;
            }
            if response.tool_calls.is_empty() || !offer_tools {
                let turn = &messages[turn_start..];
                let text = match last_word {
                    true => self.words_only(response, (&served.model, iterations), &specs, turn),
                    false => self.final_text(response, (&served.model, iterations), &specs, turn),
                };
                let answer = ChatMessage::assistant(text.clone());
                self.save_with_cost(recorded, &answer).await?;
                return Ok(TurnReply {
                    text,
                    usage,
                    served: Some(served),
                    iterations,
                    tools_completed,
                });
            }
            if !response.text.is_empty() {
                // That text led to tool calls; the answer comes later.
                self.emit(TurnEvent::TextReset);
            }
            iterations += 1;
            let assistant = ChatMessage {
                role: Role::Assistant,
                content: response.text,
                tool_calls: response.tool_calls,
                tool_call_id: None,
                name: None,
                images: Vec::new(),
            };
            self.save_with_cost(recorded, &assistant).await?;
            let results = if response.truncated {
                self.not_run(&assistant, &served.model)
            } else {
                self.run_calls(&assistant.tool_calls, &seen).await
            };
            self.unfold(&mut specs, &assistant.tool_calls);
            messages.push(assistant);
            tools_completed += self.take_results(results, &mut messages).await?;
            let switch = self.ctx.switch_to.lock().take();
            if let Some(name) = switch {
                chain = self.providers.chain_for(&name)?;
            }
        }
    }

    /// The tools the model is offered (none when the profile is not agentic).
    pub(super) fn offered_specs(&self) -> Vec<Arc<ToolSpec>> {
        if self.agent.runtime.agentic {
            self.registry.specs()
        } else {
            Vec::new()
        }
    }

    /// A tool offered by name only is offered whole once called.
    fn unfold(&self, specs: &mut [Arc<ToolSpec>], calls: &[ToolCall]) {
        for call in calls {
            if let Some(full) = self.registry.full_spec(&call.name) {
                specs
                    .iter_mut()
                    .filter(|s| s.name == call.name)
                    .for_each(|s| *s = full.clone());
            }
        }
    }

    /// Tool calls whose arguments the output limit cut off are not run:
    /// the model is told so.
    fn not_run(&self, assistant: &ChatMessage, model: &str) -> Vec<(ChatMessage, bool)> {
        tracing::warn!(agent = %self.ctx.agent, model, "tool calls stopped at the model's output limit; not run");
        assistant
            .tool_calls
            .iter()
            .map(|c| (ChatMessage::tool_result(c, INCOMPLETE_CALL.to_string()), false))
            .collect()
    }

    /// Whether this model call may offer tools (`wanted`: the loop has
    /// iterations left and tools to offer), within the tree's budget.
    fn offer_tools(&self, wanted: bool) -> Result<bool, TurnError> {
        let scope = &self.ctx.scope;
        let Some(tree) = &scope.tree else {
            return Ok(wanted);
        };
        if scope.is_tree_root {
            // The root spends a slot on every call (its last on a tool-free
            // completion).
            let reserved = tree.reserve_for_root() == Some(true);
            Ok(wanted && reserved)
        } else if wanted && !tree.reserve_for_child() {
            Err(TurnError::TreeBudget(tree.limit()))
        } else {
            Ok(wanted)
        }
    }

    /// The daily cost budgets of every agent the run is charged to.
    async fn check_budget(&self) -> Result<(), TurnError> {
        crate::cost::check(&self.config, &self.ctx.store, &self.ctx.scope.cost_chain)
            .await
            .map_err(|e| match e {
                crate::cost::CheckError::Budget(b) => TurnError::Budget(b.0),
                crate::cost::CheckError::Store(s) => TurnError::Store(s),
            })
    }

    /// Store what the person asked (see `opens_session`).
    async fn save_asked(&self, asked: &[ChatMessage]) -> Result<(), switchboard_store::StoreError> {
        let (store, key, turn) = (&self.ctx.store, self.ctx.session_key.as_str(), self.turn.as_deref());
        if !self.opens_session {
            return history::save_all(store, key, turn, asked).await;
        }
        let origin = self.ctx.scope.origin.as_ref();
        let place = switchboard_store::SessionPlace {
            channel: origin.map(|o| o.channel.as_str()),
            chat: origin.map(|o| o.chat.as_str()),
            thread: origin.and_then(|o| o.thread.as_deref()),
        };
        history::save_opening(store, (key, &self.ctx.agent, place), turn, asked).await
    }

    /// Store `message` while the ledger write `recorded` runs (they share a
    /// commit).
    async fn save_with_cost(
        &self,
        recorded: impl std::future::Future<Output = ()>,
        message: &ChatMessage,
    ) -> Result<(), TurnError> {
        // Boxed, as in `record_cost`: the store's futures are large, and
        // inline they would size every turn's task (docs/performance.md).
        let save = Box::pin(history::save(
            &self.ctx.store,
            &self.ctx.session_key,
            self.turn.as_deref(),
            message,
        ));
        let ((), saved) = tokio::join!(recorded, save);
        Ok(saved?)
    }

    /// The ledger write for one model call (logged, never failing the turn).
    async fn record_cost(&self, served: &crate::provider::Served, usage: Usage) {
        // Boxed: the ledger write's future is large, and inline it would
        // size every turn's task for this moment (docs/performance.md).
        let r = Box::pin(crate::cost::record(
            &self.config,
            &self.ctx.store,
            &self.ctx.scope.cost_chain,
            &served.name,
            &served.model,
            usage,
        ));
        if let Err(e) = r.await {
            tracing::error!(error = %e, "cost ledger write failed");
        }
    }

    /// The answer to return from the model's last response.
    pub(super) fn final_text(
        &self,
        response: crate::provider::ChatResponse,
        (model, iterations): (&str, u32),
        specs: &[Arc<ToolSpec>],
        turn: &[ChatMessage],
    ) -> String {
        if response.text.trim().is_empty() && !response.tool_calls.is_empty() {
            self.stopped(iterations, turn)
        } else if let Some(words) = self.without_call(&response.text, specs, turn) {
            words
        } else if response.truncated {
            tracing::warn!(agent = %self.ctx.agent, model, "the answer stopped at the model's output limit");
            format!("{}\n\n{CUT_OFF_NOTE}", response.text.trim_end())
        } else {
            response.text
        }
    }

    /// Save the tool results and add them to `messages`, then the notes
    /// this session's children left (announcements arrive between
    /// iterations, as data); returns how many calls succeeded.
    async fn take_results(
        &self,
        results: Vec<(ChatMessage, bool)>,
        messages: &mut Vec<ChatMessage>,
    ) -> Result<u32, TurnError> {
        if self.ctx.cancel.is_cancelled() {
            return Err(TurnError::Cancelled);
        }
        let mut completed = 0;
        let results: Vec<ChatMessage> = results
            .into_iter()
            .map(|(message, ok)| {
                completed += u32::from(ok);
                message
            })
            .collect();
        history::save_all(&self.ctx.store, &self.ctx.session_key, self.turn.as_deref(), &results).await?;
        messages.extend(results);
        for note in self.ctx.host.take_notes(&self.ctx.session_key) {
            messages.push(ChatMessage::user(note));
        }
        self.show_pictures(messages);
        Ok(completed)
    }

    /// Pictures tools returned go to a vision agent's next model call, once
    /// (each call of a turn would otherwise send them all again).
    fn show_pictures(&self, messages: &mut Vec<ChatMessage>) {
        let pictures = std::mem::take(&mut *self.ctx.pictures.lock());
        for m in messages.iter_mut().filter(|m| m.content == PICTURES_NOTE) {
            m.images.clear();
        }
        let vision = self.agent.config.vision;
        if vision && !pictures.is_empty() {
            let mut shown = ChatMessage::user(PICTURES_NOTE);
            shown.images = pictures;
            messages.push(shown);
        }
    }

    async fn run_calls(
        &self,
        calls: &[crate::message::ToolCall],
        seen: &Mutex<HashSet<String>>,
    ) -> Vec<(ChatMessage, bool)> {
        if self.agent.runtime.parallel_tools && calls.len() > 1 {
            self.run_calls_at_once(calls, seen).await
        } else {
            let mut out = Vec::with_capacity(calls.len());
            for c in calls {
                out.push(self.run_call(c, seen).await);
            }
            out
        }
    }

    /// Every call at once, results in call order. Calls are started a few
    /// at a time, and between those starts the calls already under way
    /// move on as soon as they can: with a thousand calls, the first
    /// background task is running long before the thousandth call has
    /// been looked at, instead of after all of them.
    async fn run_calls_at_once(
        &self,
        calls: &[crate::message::ToolCall],
        seen: &Mutex<HashSet<String>>,
    ) -> Vec<(ChatMessage, bool)> {
        use futures::{FutureExt, StreamExt};
        const STARTED_BETWEEN_CHECKS: usize = 16;
        let mut results: Vec<Option<(ChatMessage, bool)>> = (0..calls.len()).map(|_| None).collect();
        let mut running = futures::stream::FuturesUnordered::new();
        for (i, call) in calls.iter().enumerate() {
            running.push(self.run_call(call, seen).map(move |r| (i, r)));
            if (i + 1) % STARTED_BETWEEN_CHECKS == 0 {
                // Polled once, without waiting: wake-ups are kept for the
                // wait below.
                while let Some(Some((j, r))) = running.next().now_or_never() {
                    results[j] = Some(r);
                }
            }
        }
        while let Some((j, r)) = running.next().await {
            results[j] = Some(r);
        }
        results
            .into_iter()
            .map(|r| r.expect("every call yields one result"))
            .collect()
    }
}
