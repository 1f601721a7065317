//! The turn's first model request, open to late messages: a message the
//! same person sends before the model has written anything joins the turn.
//! The request in flight is dropped (its estimated prompt recorded in the
//! cost ledger), the message is stored and added, and the request is sent
//! again with all of them (docs/conversations.md, "Merged bursts").

use super::{AgentRun, TurnError, TurnEvent};
use crate::message::{ChatMessage, ToolSpec, Usage};
use crate::provider::{ChatRequest, ChatResponse, Delta, Deltas, ProviderChain, Served};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use switchboard_store::StoreError;
use tokio::sync::{mpsc, oneshot};

/// A message that may join a turn whose model has not answered yet. The
/// runtime answers `taken` with whether it joined; `false` (or no answer)
/// means it is the caller's to run in a later turn.
pub struct Join {
    /// What the person wrote.
    pub text: String,
    /// Whether it joined.
    pub taken: oneshot::Sender<bool>,
}

/// Where late messages come from: closed once the model has answered or
/// started writing.
pub type Joins = mpsc::Receiver<Join>;

/// What the person asked, being stored beside the first model request.
pub(super) type Opening<'a> =
    Pin<Box<futures::future::MaybeDone<Pin<Box<dyn Future<Output = Result<(), StoreError>> + Send + 'a>>>>>;

/// How one request ended.
enum Ended {
    Answered(Result<(ChatResponse, Served), crate::provider::ProviderError>),
    Joined(Join),
}

impl AgentRun {
    /// Ask the model about `messages`, streaming its text to listeners. The
    /// opening's store write runs beside the request and is finished before
    /// this returns. While `joins` is open and nothing is written, a late
    /// message restarts the request with it (see the module doc).
    pub(super) async fn model_call(
        &self,
        chain: &ProviderChain,
        messages: &mut Vec<ChatMessage>,
        tools: &[Arc<ToolSpec>],
        opening: &mut Option<Opening<'_>>,
        joins: &mut Option<Joins>,
    ) -> Result<(ChatResponse, Served), TurnError> {
        loop {
            let spoke = AtomicBool::new(false);
            // Someone listening gets the answer as it is written.
            let sink = |d: Delta<'_>| {
                self.emit(match d {
                    Delta::Text(t) => {
                        spoke.store(true, Ordering::Relaxed);
                        TurnEvent::Text(t.to_string())
                    }
                    Delta::Reset => TurnEvent::TextReset,
                });
            };
            let ended = {
                let request = ChatRequest {
                    messages,
                    tools,
                    temperature: self.temperature,
                    deltas: self.events.as_ref().map(|_| Deltas(&sink)),
                    max_tokens: None,
                };
                let call = async {
                    match opening.as_mut() {
                        Some(saved) => tokio::join!(chain.chat(&request), saved.as_mut()).0,
                        None => chain.chat(&request).await,
                    }
                };
                tokio::select! {
                    _ = self.ctx.cancel.cancelled() => return Err(TurnError::Cancelled),
                    r = call => Ended::Answered(r),
                    j = next_join(joins, &spoke) => Ended::Joined(j),
                }
            };
            // Nothing else is written before the opening (the transcript
            // keeps its order).
            if let Some(mut saved) = opening.take() {
                saved.as_mut().await;
                if let Some(r) = saved.as_mut().take_output() {
                    r?;
                }
            }
            match ended {
                Ended::Answered(r) => {
                    // Messages from now on wait for the next turn.
                    *joins = None;
                    return Ok(r?);
                }
                Ended::Joined(join) => self.take_join(chain, messages, tools, join).await?,
            }
        }
    }

    /// A late message joins: the dropped request is charged as estimated,
    /// the message stored and added, and its sender told it joined.
    async fn take_join(
        &self,
        chain: &ProviderChain,
        messages: &mut Vec<ChatMessage>,
        tools: &[Arc<ToolSpec>],
        join: Join,
    ) -> Result<(), TurnError> {
        let primary = chain.primary();
        let estimated = crate::provider::estimate(messages) + crate::provider::estimate_tools(tools);
        tracing::info!(agent = %self.ctx.agent, estimated_prompt_tokens = estimated, "a message came before the model answered; asking again with it");
        let usage = Usage {
            input_tokens: estimated,
            ..Usage::default()
        };
        let charged = crate::cost::record(
            &self.config,
            &self.ctx.store,
            &self.ctx.scope.cost_chain,
            primary.name(),
            primary.model(),
            usage,
        );
        if let Err(e) = Box::pin(charged).await {
            tracing::error!(error = %e, "cost ledger write failed");
        }
        let message = ChatMessage::user(join.text);
        super::history::save(&self.ctx.store, &self.ctx.session_key, self.turn.as_deref(), &message).await?;
        messages.push(message);
        let _ = join.taken.send(true);
        Ok(())
    }
}

/// The next late message that may still join: one that comes after the
/// model started writing is refused, and so is every one after it.
async fn next_join(joins: &mut Option<Joins>, spoke: &AtomicBool) -> Join {
    if let Some(rx) = joins.as_mut() {
        while let Some(join) = rx.recv().await {
            if !spoke.load(Ordering::Relaxed) {
                return join;
            }
            let _ = join.taken.send(false);
            rx.close();
        }
    }
    std::future::pending().await
}
