//! Messages found pending at start: answered from what their turn left
//! before the stop, or run again. A merged turn's record is kept under its
//! last message's key; the group is formed again the same way at start
//! (see `merge`), and every key of it is looked up, so a turn that had
//! started changes is not run a second time.

use super::Router;
use crate::service::taken::Taken;
use switchboard_core::MessageStatus;
use switchboard_runtime::recover::Recovery;

impl Router {
    /// `t` (with the messages merged into it) was taken before a restart:
    /// answered from its record (how it ended), or `None` to run it again.
    pub(super) async fn answered_from_record(
        &self,
        session_key: &str,
        t: &Taken,
        follow_up: Option<&str>,
    ) -> Option<MessageStatus> {
        let keys = std::iter::once(&t.key).chain(t.merged.iter().rev());
        let mut found = Ok(Recovery::Rerun);
        for key in keys {
            found = self.runtime.recover_turn(session_key, key).await;
            if !matches!(found, Ok(Recovery::Rerun)) {
                break;
            }
        }
        match found {
            Ok(Recovery::Rerun) => {
                tracing::info!(session = %session_key, key = %t.key, "running again a turn a restart interrupted");
                None
            }
            Ok(Recovery::Finished(answer)) => {
                tracing::info!(session = %session_key, key = %t.key, "a turn had finished before the restart; sending its answer");
                let answer = match follow_up {
                    Some(prefix) => format!("{prefix}{answer}"),
                    None => answer,
                };
                self.answer(t, answer).await;
                Some(MessageStatus::Done)
            }
            Ok(Recovery::Interrupted(done)) => {
                tracing::warn!(session = %session_key, key = %t.key, "a turn a restart interrupted had started changes; not run again");
                self.answer(t, interrupted(&done)).await;
                Some(MessageStatus::Failed)
            }
            Err(e) => {
                tracing::error!(session = %session_key, error = %e, "cannot read what an interrupted turn did; not run again");
                self.answer(t, interrupted(&["(the record could not be read)".to_string()]))
                    .await;
                Some(MessageStatus::Failed)
            }
        }
    }
}

/// The answer to a message whose turn a restart cut short after it had
/// started changing things.
fn interrupted(done: &[String]) -> String {
    let list: String = done.iter().map(|d| format!("\n- {d}")).collect();
    format!(
        "The gateway restarted while it was working on this message. It had already started:{list}\nIt was not run again, so nothing is done twice. Check the result, and ask again if you still need it."
    )
}
