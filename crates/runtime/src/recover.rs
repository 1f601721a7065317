//! After a crash: what to do with a turn that was running.
//!
//! A turn's transcript messages carry the inbound message that started it
//! (`TurnRequest::turn`). The assistant message announcing tool calls is
//! stored before the tools run, so the transcript lists every call that
//! may have started. If none of them could change anything (reads only),
//! the turn's partial transcript is dropped and the turn runs again as if
//! nothing had happened. If one could (a write, a command, a child run, a
//! message to another session), running it again could do that twice: the
//! turn is not re-run, and the person is told what had been done. A turn
//! whose final answer was already stored (the crash came between the
//! answer and its delivery being queued) is not run at all: its answer is
//! sent.

use crate::agent::history;
use crate::message::{ChatMessage, Role};
use crate::policy::Risk;
use crate::redact::summarize_args;
use crate::tools::ToolRegistry;
use serde_json::Value;
use switchboard_store::{Store, StoreError};

/// How the transcript note on an interrupted turn starts (the model reads
/// it in later turns).
const NOTE: &str = "(This turn was interrupted by a restart of the gateway after starting:";

/// What to do with an interrupted turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recovery {
    /// It had finished: this is its answer, to deliver.
    Finished(String),
    /// Nothing it did changed anything: run it again.
    Rerun,
    /// It had started tool calls that change things (one line each): do
    /// not run it again.
    Interrupted(Vec<String>),
}

/// Judge the interrupted turn `turn` of `session_key` (see the module doc),
/// and leave its transcript ready: dropped for a re-run, closed with a note
/// otherwise.
pub async fn recover_turn(
    store: &Store,
    tools: &ToolRegistry,
    session_key: &str,
    turn: &str,
) -> Result<Recovery, StoreError> {
    let stored = store.sessions().turn_messages(session_key, turn).await?;
    let messages: Vec<ChatMessage> = stored
        .iter()
        .filter_map(|m| serde_json::from_str(&m.body).ok())
        .collect();
    let done = changes(tools, &messages);
    match messages.last() {
        // Judged before (a second crash): the note is there already.
        Some(last) if last.role == Role::Assistant && last.content.starts_with(NOTE) => {
            return Ok(Recovery::Interrupted(done));
        }
        Some(last) if last.role == Role::Assistant && last.tool_calls.is_empty() => {
            return Ok(Recovery::Finished(last.content.clone()));
        }
        _ => {}
    }
    if done.is_empty() {
        store.sessions().forget_turn(session_key, turn).await?;
        return Ok(Recovery::Rerun);
    }
    let note = ChatMessage::assistant(format!("{NOTE} {}. It was not run again.)", done.join("; ")));
    history::save(store, session_key, Some(turn), &note).await?;
    Ok(Recovery::Interrupted(done))
}

/// The calls in `messages` that may have changed something, as
/// `tool {arguments}`, each marked when its result was never recorded.
fn changes(tools: &ToolRegistry, messages: &[ChatMessage]) -> Vec<String> {
    let finished: Vec<&str> = messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .filter_map(|m| m.tool_call_id.as_deref())
        .collect();
    let mut out = Vec::new();
    for call in messages.iter().flat_map(|m| &m.tool_calls) {
        let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
        // A tool this build does not know is assumed to change things.
        let effect = tools.get(&call.name).map(|t| t.effect(&args));
        if effect == Some(Risk::Read) {
            continue;
        }
        let state = if finished.contains(&call.id.as_str()) {
            ""
        } else {
            " (cut off while running)"
        };
        out.push(format!("{} {}{state}", call.name, summarize_args(&args)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::ToolCall;

    fn call(id: &str, name: &str, args: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: args.into(),
        }
    }

    fn assistant_calling(calls: Vec<ToolCall>) -> ChatMessage {
        ChatMessage {
            tool_calls: calls,
            ..ChatMessage::assistant("")
        }
    }

    #[test]
    fn reads_change_nothing_and_writes_do_finished_or_not() {
        let tools = ToolRegistry::plain();
        let read = call("a", "file_read", r#"{"path":"notes.txt"}"#);
        let write = call("b", "file_write", r#"{"path":"out.txt","content":"x"}"#);
        let shell = call("c", "shell", r#"{"command":"ls"}"#);
        let only_reads = vec![
            ChatMessage::user("look"),
            assistant_calling(vec![read.clone()]),
            ChatMessage::tool_result(&read, "text"),
        ];
        assert!(changes(&tools, &only_reads).is_empty());

        let messages = vec![
            ChatMessage::user("write"),
            assistant_calling(vec![read.clone(), write.clone(), shell.clone()]),
            ChatMessage::tool_result(&read, "text"),
            ChatMessage::tool_result(&write, "written"),
        ];
        let found = changes(&tools, &messages);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].starts_with("file_write ") && found[0].contains("out.txt") && !found[0].contains("cut off"));
        assert!(found[1].starts_with("shell ") && found[1].ends_with("(cut off while running)"));

        let unknown = vec![assistant_calling(vec![call("d", "teleport", "{}")])];
        assert_eq!(changes(&tools, &unknown).len(), 1, "an unknown tool counts as a change");
    }

    #[tokio::test]
    async fn each_interrupted_turn_gets_its_fitting_ending() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&format!("sqlite://{}/cp.db", dir.path().display()))
            .await
            .unwrap();
        let tools = ToolRegistry::plain();
        let save = |turn: &'static str, ms: Vec<ChatMessage>| {
            let store = store.clone();
            async move { history::save_all(&store, "s", Some(turn), &ms).await.unwrap() }
        };
        let read = call("a", "file_read", r#"{"path":"notes.txt"}"#);
        let write = call("b", "file_write", r#"{"path":"out.txt","content":"x"}"#);
        save(
            "answered",
            vec![ChatMessage::user("hi"), ChatMessage::assistant("hello there")],
        )
        .await;
        save(
            "reading",
            vec![
                ChatMessage::user("look"),
                assistant_calling(vec![read.clone()]),
                ChatMessage::tool_result(&read, "text"),
            ],
        )
        .await;
        save(
            "writing",
            vec![ChatMessage::user("write"), assistant_calling(vec![write])],
        )
        .await;

        assert_eq!(
            recover_turn(&store, &tools, "s", "answered").await.unwrap(),
            Recovery::Finished("hello there".into())
        );
        assert_eq!(
            recover_turn(&store, &tools, "s", "reading").await.unwrap(),
            Recovery::Rerun
        );
        assert!(
            store.sessions().turn_messages("s", "reading").await.unwrap().is_empty(),
            "dropped for the re-run"
        );
        let first = recover_turn(&store, &tools, "s", "writing").await.unwrap();
        assert!(matches!(&first, Recovery::Interrupted(d) if d.len() == 1), "{first:?}");
        assert_eq!(
            store.sessions().turn_messages("s", "writing").await.unwrap().len(),
            3,
            "the note is kept"
        );
        // A second crash before the person was told: same verdict, one note.
        assert_eq!(recover_turn(&store, &tools, "s", "writing").await.unwrap(), first);
        assert_eq!(store.sessions().turn_messages("s", "writing").await.unwrap().len(), 3);
    }
}
