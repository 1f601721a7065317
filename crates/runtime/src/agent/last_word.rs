//! The end of a turn whose tool iterations are used up (or whose tree
//! budget allows no more tools, or whose model answered nothing after its
//! tools ran): the last request offers no tools and asks for a plain answer, naming the tools that can no longer be called; an
//! answer that is still a call becomes the stopped-after note and what the
//! turn did, never the call's JSON (docs/models.md, "The iteration limit").

use super::AgentRun;
use crate::message::{ChatMessage, Role, ToolSpec};
use crate::provider::{ChatResponse, text_calls};
use std::collections::BTreeMap;
use std::sync::Arc;

impl AgentRun {
    /// The note added at the end of the last request (at the end, so the
    /// conversation before it stays the same prefix the server cached).
    pub(super) fn last_word_note(&self, specs: &[Arc<ToolSpec>]) -> ChatMessage {
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        ChatMessage::system(format!(
            "No more tool calls are possible for this message (tools: {}). Do not write a tool call. Answer the user now in plain words with what you have found so far, and say what is left undone.",
            names.join(", ")
        ))
    }

    /// The answer to send when tools were not offered: the stopped-after
    /// note and what was done, when the model answered with a call anyway.
    pub(super) fn words_only(
        &self,
        response: ChatResponse,
        (model, iterations): (&str, u32),
        specs: &[Arc<ToolSpec>],
        turn: &[ChatMessage],
    ) -> String {
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        let called = !response.tool_calls.is_empty() || text_calls::names_a_call(&response.text, &names);
        if called {
            tracing::warn!(agent = %self.ctx.agent, model, iterations, "the model answered with a tool call after its tools were used up");
            return self.stopped(iterations, turn);
        }
        self.final_text(response, (model, iterations), specs, turn)
    }

    /// The answer without the call it ends with, when it ends with a call
    /// that was not taken (one echoed with its output, after the tool ran):
    /// the words before it, or what the turn did when there are none.
    pub(super) fn without_call(&self, text: &str, specs: &[Arc<ToolSpec>], turn: &[ChatMessage]) -> Option<String> {
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        let unmarked = text_calls::without_markup(text);
        let text = unmarked.as_deref().unwrap_or(text);
        let before = match text_calls::before_a_call(text, &names) {
            Some(before) => before.trim_end(),
            None if unmarked.is_some() => text.trim_end(),
            None => return None,
        };
        tracing::warn!(agent = %self.ctx.agent, "the answer held a tool call or the template's markup; it is left out");
        if !before.is_empty() {
            return Some(before.to_string());
        }
        Some(match done_so_far(turn) {
            Some(done) => format!("Done: {done}."),
            None => "(the model answered with a tool call it could not make, and nothing was run)".to_string(),
        })
    }

    /// Whether to ask again for words: the model answered nothing at all
    /// after its tools ran (small models often end there), and `may` says
    /// it has not been asked yet this turn.
    pub(super) fn ask_for_words(&self, response: &ChatResponse, may: bool) -> bool {
        let empty = response.tool_calls.is_empty() && response.text.trim().is_empty();
        if may && empty {
            tracing::info!(agent = %self.ctx.agent, "the model answered nothing after its tools ran; asked once more for words");
        }
        may && empty
    }

    /// The stopped-after note, with the tools this turn called.
    pub(super) fn stopped(&self, iterations: u32, turn: &[ChatMessage]) -> String {
        let note = format!(
            "(stopped after {iterations} tool iterations without a final answer; raise [runtime_profiles.{}].max_tool_iterations if the task needs more)",
            self.agent.config.runtime_profile
        );
        match done_so_far(turn) {
            Some(done) => format!("{note}\n\nDone so far: {done}."),
            None => note,
        }
    }
}

/// The tools `turn` called, with how many times: `shell ×3, file_write ×1`.
fn done_so_far(turn: &[ChatMessage]) -> Option<String> {
    let mut counts: BTreeMap<&str, u32> = BTreeMap::new();
    let mut order: Vec<&str> = Vec::new();
    for call in turn
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .flat_map(|m| &m.tool_calls)
    {
        let n = counts.entry(&call.name).or_default();
        if *n == 0 {
            order.push(&call.name);
        }
        *n += 1;
    }
    (!order.is_empty()).then(|| {
        order
            .iter()
            .map(|name| format!("{name} ×{}", counts[name]))
            .collect::<Vec<_>>()
            .join(", ")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::ToolCall;

    #[test]
    fn what_was_done_is_counted_in_call_order() {
        let call = |name: &str| ToolCall {
            id: "c".into(),
            name: name.into(),
            arguments: "{}".into(),
        };
        let mut a = ChatMessage::assistant("");
        a.tool_calls = vec![call("shell"), call("file_write")];
        let mut b = ChatMessage::assistant("");
        b.tool_calls = vec![call("shell")];
        let turn = [ChatMessage::user("go"), a, b];
        assert_eq!(done_so_far(&turn).as_deref(), Some("shell ×2, file_write ×1"));
        assert_eq!(done_so_far(&turn[..1]), None);
    }
}
