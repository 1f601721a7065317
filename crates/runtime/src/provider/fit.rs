//! Fitting a conversation into a model's context window.
//!
//! Tokens are estimated from text length (about four bytes a token), and
//! the estimate is corrected by what the server reports it counted
//! (`usage.prompt_tokens`). When the conversation does not fit, the oldest
//! turns go first: the system prompt, the tool schemas and the current turn
//! always stay, and a tool call is never separated from its result (an
//! assistant message with calls and the tool results after it leave
//! together). Room is kept for the answer.

use crate::message::{ChatMessage, Role, ToolSpec};
use parking_lot::Mutex;
use std::sync::Arc;

/// Bytes per token of the estimate before any correction.
const BYTES_PER_TOKEN: u64 = 4;
/// Per-message overhead (role, separators) in tokens.
const MESSAGE_OVERHEAD: u64 = 4;

/// What is known of one provider's context.
#[derive(Debug)]
pub struct ContextLimits {
    /// Tokens the context holds, once known (configured, asked from the
    /// server, or learned from an overflow answer).
    window: Mutex<Option<u32>>,
    /// Tokens kept free for the answer.
    pub answer_room: u32,
    /// Server-counted tokens per estimated token, learned from answers.
    ratio: Mutex<f64>,
}

impl ContextLimits {
    /// Limits with a known (or unknown) window.
    pub fn new(window: Option<u32>, answer_room: u32) -> Self {
        Self {
            window: Mutex::new(window),
            answer_room,
            ratio: Mutex::new(1.0),
        }
    }

    /// The context window, when known.
    pub fn window(&self) -> Option<u32> {
        *self.window.lock()
    }

    /// Learn the window.
    pub fn set_window(&self, tokens: u32) {
        *self.window.lock() = Some(tokens);
    }

    /// The server counted `actual` prompt tokens where we estimated `estimated`.
    pub fn calibrate(&self, estimated: u64, actual: u64) {
        if estimated == 0 || actual == 0 {
            return;
        }
        let seen = (actual as f64 / estimated as f64).clamp(0.25, 4.0);
        let mut r = self.ratio.lock();
        *r = 0.5 * *r + 0.5 * seen;
    }

    /// Estimated tokens of a request, corrected by what servers reported.
    pub fn tokens(&self, messages: &[ChatMessage], tools: &[Arc<ToolSpec>]) -> u64 {
        self.corrected(estimate(messages) + estimate_tools(tools))
    }

    /// A raw estimate (see `estimate`) corrected by what servers reported.
    pub fn corrected(&self, raw: u64) -> u64 {
        (raw as f64 * *self.ratio.lock()).ceil() as u64
    }

    /// The tokens a prompt may use: the window minus the answer's room,
    /// scaled by `share` (1.0 normally, less after the server refused).
    pub fn budget(&self, share: f64) -> Option<u64> {
        let window = u64::from(self.window()?);
        let room = u64::from(self.answer_room).min(window / 2);
        Some(((window - room) as f64 * share) as u64)
    }

    /// `messages` cut to fit `budget` tokens with `tools`; `None` when they
    /// fit as they are.
    pub fn fit(&self, messages: &[ChatMessage], tools: &[Arc<ToolSpec>], budget: u64) -> Option<Vec<ChatMessage>> {
        // Each message is estimated once; the total shrinks as units leave.
        let each: Vec<u64> = messages.iter().map(|m| estimate(std::slice::from_ref(m))).collect();
        let mut total = estimate_tools(tools) + each.iter().sum::<u64>();
        if self.corrected(total) <= budget {
            return None;
        }
        let head = usize::from(messages.first().is_some_and(|m| m.role == Role::System));
        // The current turn: from the last person's message on.
        let current = messages
            .iter()
            .rposition(|m| m.role == Role::User)
            .unwrap_or(messages.len())
            .max(head);
        let mut start = head;
        while start < current && self.corrected(total) > budget {
            let end = unit_end(messages, start, current);
            total -= each[start..end].iter().sum::<u64>();
            start = end;
        }
        // Tool results whose call was dropped cannot be sent alone.
        while start < messages.len() && messages[start].role == Role::Tool {
            start += 1;
        }
        let mut kept = messages[..head].to_vec();
        kept.extend_from_slice(&messages[start..]);
        Some(kept)
    }
}

/// Where the unit starting at `start` ends: an assistant message with tool
/// calls takes the tool results after it along.
fn unit_end(messages: &[ChatMessage], start: usize, limit: usize) -> usize {
    let mut end = start + 1;
    if messages[start].role == Role::Assistant && !messages[start].tool_calls.is_empty() {
        while end < limit && messages[end].role == Role::Tool {
            end += 1;
        }
    }
    end
}

/// What one picture costs a model, roughly (providers count 85–1,600
/// tokens by its size; the high end, so a turn with pictures is not cut short).
const IMAGE_TOKENS: u64 = 1600;

/// Estimated tokens of messages (before any correction by server counts).
pub fn estimate(messages: &[ChatMessage]) -> u64 {
    messages
        .iter()
        .map(|m| {
            let calls: usize = m
                .tool_calls
                .iter()
                .map(|c| c.id.len() + c.name.len() + c.arguments.len() + 24)
                .sum();
            (m.content.len() + calls) as u64 / BYTES_PER_TOKEN + MESSAGE_OVERHEAD + m.images.len() as u64 * IMAGE_TOKENS
        })
        .sum()
}

/// Estimated tokens of tool schemas as sent with every request.
pub fn estimate_tools(tools: &[Arc<ToolSpec>]) -> u64 {
    tools
        .iter()
        .map(|t| (t.name.len() + t.description.len() + t.parameters.get().len() + 48) as u64 / BYTES_PER_TOKEN)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::ToolCall;

    fn call(id: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: "shell".into(),
            arguments: "{}".into(),
        }
    }

    fn chat(turns: usize) -> Vec<ChatMessage> {
        let mut m = vec![ChatMessage::system("be brief")];
        for i in 0..turns {
            m.push(ChatMessage::user(format!("question {i} {}", "q".repeat(400))));
            let mut a = ChatMessage::assistant("");
            a.tool_calls = vec![call(&format!("c{i}"))];
            m.push(a.clone());
            m.push(ChatMessage::tool_result(&a.tool_calls[0], "r".repeat(400)));
            m.push(ChatMessage::assistant(format!("answer {i} {}", "a".repeat(400))));
        }
        m.push(ChatMessage::user("the question now"));
        m
    }

    #[test]
    fn the_oldest_turns_go_first_and_calls_keep_their_results() {
        let limits = ContextLimits::new(Some(1000), 200);
        let messages = chat(10);
        let budget = limits.budget(1.0).unwrap();
        let kept = limits.fit(&messages, &[], budget).expect("too long as it is");
        assert!(limits.tokens(&kept, &[]) <= budget);
        assert_eq!(kept[0].role, Role::System);
        assert_eq!(kept.last().unwrap().content, "the question now");
        assert!(kept.len() > 2, "some history stays");
        for (i, m) in kept.iter().enumerate() {
            if m.role == Role::Tool {
                let id = m.tool_call_id.as_deref().unwrap();
                let caller = kept[..i].iter().rev().find(|p| p.role != Role::Tool).unwrap();
                assert!(
                    caller.tool_calls.iter().any(|c| c.id == id),
                    "result {id} without its call"
                );
            }
        }
        assert!(
            limits.fit(&chat(0), &[], budget).is_none(),
            "a short chat is sent whole"
        );
    }

    #[test]
    fn the_server_count_corrects_the_estimate() {
        let limits = ContextLimits::new(Some(1000), 200);
        let m = chat(1);
        let before = limits.tokens(&m, &[]);
        limits.calibrate(before, before * 2);
        assert!(limits.tokens(&m, &[]) >= before * 3 / 2);
    }
}
