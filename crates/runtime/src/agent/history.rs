//! Loading and saving a session's transcript through the store.

use crate::message::{ChatMessage, Role};
use switchboard_store::{SessionPlace, Store, StoreError};

/// How many stored messages a turn sends back to the model.
const HISTORY_LIMIT: i64 = 200;

pub(crate) use crate::compaction::Loaded;

/// The stored conversation, made safe to send: it never starts with tool
/// results whose call was cut off, and an assistant tool call whose results
/// are missing (a crash mid-turn) is dropped.
pub(crate) async fn load(store: &Store, session_key: &str) -> Result<Loaded, StoreError> {
    let rows = store.sessions().history(session_key, HISTORY_LIMIT).await?;
    let mut summary = None;
    let mut out: Vec<(i64, ChatMessage)> = Vec::with_capacity(rows.len());
    for row in rows {
        if row.role == "summary" {
            summary = crate::compaction::summary_text(&row.body);
            continue;
        }
        match serde_json::from_str::<ChatMessage>(&row.body) {
            Ok(m) => out.push((row.id, m)),
            Err(e) => {
                tracing::warn!(session_key, id = row.id, error = %e, "skipping unreadable stored message");
            }
        }
    }
    let (ids, messages) = sanitize(out).into_iter().unzip();
    Ok(Loaded { summary, messages, ids })
}

fn sanitize(messages: Vec<(i64, ChatMessage)>) -> Vec<(i64, ChatMessage)> {
    let mut out = Vec::with_capacity(messages.len());
    let mut i = 0;
    while i < messages.len() {
        let (id, m) = &messages[i];
        match m.role {
            Role::Tool => {} // orphan result: its call is not in the window
            Role::Assistant if !m.tool_calls.is_empty() => {
                let mut j = i + 1;
                while j < messages.len() && messages[j].1.role == Role::Tool {
                    j += 1;
                }
                let answered = messages[i + 1..j]
                    .iter()
                    .filter_map(|r| r.1.tool_call_id.as_deref())
                    .collect::<Vec<_>>();
                if m.tool_calls.iter().all(|c| answered.contains(&c.id.as_str())) {
                    out.extend(messages[i..j].iter().cloned());
                } else if !m.content.is_empty() {
                    out.push((*id, ChatMessage::assistant(m.content.clone())));
                }
                i = j;
                continue;
            }
            _ => out.push((*id, m.clone())),
        }
        i += 1;
    }
    out
}

/// Save one message of turn `turn` (see `TurnRequest::turn`).
pub(crate) async fn save(
    store: &Store,
    session_key: &str,
    turn: Option<&str>,
    m: &ChatMessage,
) -> Result<(), StoreError> {
    save_all(store, session_key, turn, std::slice::from_ref(m)).await
}

/// Save a batch (one turn's tool results) in one transaction.
pub(crate) async fn save_all(
    store: &Store,
    session_key: &str,
    turn: Option<&str>,
    ms: &[ChatMessage],
) -> Result<(), StoreError> {
    let rows = rows(ms)?;
    store.sessions().append_turn(session_key, turn, &rows).await
}

/// Save what the person asked at the start of a turn of `agent` (at
/// `place`), with the session's creation or touch in the same write.
pub(crate) async fn save_opening(
    store: &Store,
    (session_key, agent, place): (&str, &str, SessionPlace<'_>),
    turn: Option<&str>,
    ms: &[ChatMessage],
) -> Result<(), StoreError> {
    let rows = rows(ms)?;
    store
        .sessions()
        .open_turn((session_key, agent, place), turn, &rows)
        .await
}

fn rows(ms: &[ChatMessage]) -> Result<Vec<(&str, String)>, StoreError> {
    ms.iter()
        .map(|m| {
            let body = serde_json::to_string(m).map_err(|e| StoreError::Corrupt(e.to_string()))?;
            Ok((m.role.as_str(), body))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::ToolCall;

    #[test]
    fn unanswered_tool_calls_are_dropped() {
        let call = ToolCall {
            id: "c1".into(),
            name: "shell".into(),
            arguments: "{}".into(),
        };
        let mut asked = ChatMessage::assistant("");
        asked.tool_calls = vec![call.clone()];
        let msgs = vec![
            ChatMessage::tool_result(&call, "orphan"),
            ChatMessage::user("hi"),
            asked.clone(),
            ChatMessage::user("again"),
            asked,
            ChatMessage::tool_result(&call, "done"),
        ];
        let out = sanitize(msgs.into_iter().enumerate().map(|(i, m)| (i as i64, m)).collect());
        let roles: Vec<_> = out.iter().map(|m| m.1.role).collect();
        assert_eq!(roles, [Role::User, Role::User, Role::Assistant, Role::Tool]);
    }
}
