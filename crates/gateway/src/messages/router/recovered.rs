//! Messages found pending at start: answered from what their turn left
//! before the stop, or run again. A merged turn's record is kept under its
//! last message's key; the group is formed again the same way at start
//! (see `merge`), and every key of it is looked up, so a turn that had
//! started changes is not run a second time.

use super::Router;
use crate::messages::taken::Taken;
use switchboard_core::MessageStatus;
use switchboard_runtime::recover::Recovery;

/// What became of a message taken before a restart (or put back while
/// the database did not take writes).
pub(super) enum Recovered {
    /// Answered from its record, ending so.
    Answered(MessageStatus),
    /// To run again.
    Rerun,
    /// Its record cannot be read or closed now: put back again.
    HeldUp,
}

impl Router {
    /// `t` (with the messages merged into it) was taken before a restart,
    /// or put back: answered from its record (how it ended), run again, or
    /// held up while the database cannot tell.
    pub(super) async fn answered_from_record(
        &self,
        session_key: &str,
        t: &Taken,
        follow_up: Option<&str>,
    ) -> Recovered {
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
                tracing::info!(session = %session_key, key = %t.key, "running again a turn a restart interrupted (or the database held up)");
                Recovered::Rerun
            }
            Ok(Recovery::Finished(answer)) => {
                tracing::info!(session = %session_key, key = %t.key, "a turn had finished before the restart; sending its answer");
                let answer = match follow_up {
                    Some(prefix) => format!("{prefix}{answer}"),
                    None => answer,
                };
                self.answer(t, answer).await;
                Recovered::Answered(MessageStatus::Done)
            }
            Ok(Recovery::Interrupted(done)) => {
                tracing::warn!(session = %session_key, key = %t.key, "a turn a restart interrupted (or the database held up) had started changes; not run again");
                let what = if t.held_up > 0 { "lost its storage" } else { "restarted" };
                self.answer(t, interrupted(what, &done)).await;
                Recovered::Answered(MessageStatus::Failed)
            }
            Err(e) if e.is_unavailable() => {
                tracing::error!(session = %session_key, error = %e, remedy = crate::messages::storage_down::remedy(&e), "cannot read or close what an interrupted turn did; tried again once the database takes writes");
                Recovered::HeldUp
            }
            Err(e) => {
                tracing::error!(session = %session_key, error = %e, "cannot read what an interrupted turn did; not run again");
                self.answer(
                    t,
                    interrupted("restarted", &["(the record could not be read)".to_string()]),
                )
                .await;
                Recovered::Answered(MessageStatus::Failed)
            }
        }
    }
}

/// The answer to a message whose turn a restart (or the database going
/// away: `what` happened to the gateway) cut short after it had started
/// changing things.
fn interrupted(what: &str, done: &[String]) -> String {
    let list: String = done.iter().map(|d| format!("\n- {d}")).collect();
    format!(
        "The gateway {what} while it was working on this message. It had already started:{list}\nIt was not run again, so nothing is done twice. Check the result, and ask again if you still need it."
    )
}
