//! Where a compaction cuts: always at the start of a person's message, so
//! an assistant's tool calls leave together with their results.

use crate::message::{ChatMessage, Role};
use crate::provider::{ContextLimits, estimate};

/// The index from which `messages` are kept so that what is kept takes at
/// most `keep` tokens (everything before it is summarised); `messages.len()`
/// when even the last exchange is bigger than that.
pub(crate) fn cut_for_room(messages: &[ChatMessage], keep: u64, limits: &ContextLimits) -> usize {
    let mut cut = messages.len();
    let mut kept = 0;
    let mut end = messages.len();
    for start in (0..messages.len()).rev() {
        if messages[start].role != Role::User {
            continue;
        }
        kept += estimate(&messages[start..end]);
        end = start;
        if limits.corrected(kept) > keep {
            break;
        }
        cut = start;
    }
    cut
}

/// The index of the last person's message: `/compact` summarises all
/// before it and keeps the last exchange (0 when there is nothing before).
pub(crate) fn cut_keeping_last_turn(messages: &[ChatMessage]) -> usize {
    messages.iter().rposition(|m| m.role == Role::User).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chat(turns: usize) -> Vec<ChatMessage> {
        let mut m = Vec::new();
        for i in 0..turns {
            m.push(ChatMessage::user(format!("question {i} {}", "q".repeat(400))));
            m.push(ChatMessage::assistant(format!("answer {i} {}", "a".repeat(400))));
        }
        m
    }

    #[test]
    fn cuts_fall_on_a_persons_message_and_keep_what_fits() {
        let limits = ContextLimits::new(None, 0);
        let m = chat(10);
        let one_turn = estimate(&m[18..]);
        let cut = cut_for_room(&m, one_turn * 3, &limits);
        assert_eq!(cut, 14, "three exchanges kept");
        assert_eq!(m[cut].role, Role::User);
        assert_eq!(
            cut_for_room(&m, one_turn / 2, &limits),
            m.len(),
            "nothing fits: all summarised"
        );
        assert_eq!(
            cut_for_room(&m, u64::MAX, &limits),
            0,
            "everything fits: nothing summarised"
        );
        assert_eq!(cut_keeping_last_turn(&m), 18);
        assert_eq!(cut_keeping_last_turn(&[]), 0);
    }
}
