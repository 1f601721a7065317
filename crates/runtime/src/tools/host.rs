//! What a run's tools and its loop may reach of the runtime while they
//! work: the kernel sandbox, the file poster, the fence and notes left for
//! the loop. Narrower than the runtime itself, which only the tools that
//! start or steer child runs use (`Core::of`).

use std::sync::Arc;

/// See the module doc. The runtime's core implements it.
pub trait RunHost: Send + Sync {
    /// Kernel confinement of commands and file tools (docs/security.md).
    fn sandbox(&self) -> &switchboard_sandbox::Sandbox;
    /// What posts files into chats (`send_file`), once installed.
    fn file_poster(&self) -> Option<Arc<dyn crate::files::FilePoster>>;
    /// Whether work is still this gateway's (several gateways on one database).
    fn fence(&self) -> Option<Arc<dyn crate::fence::Fence>>;
    /// Leave a note for the loop of `session_key` (seen at its next step).
    fn leave_note(&self, session_key: &str, text: String);
    /// Notes (announcements, steering) left for the loop of `session_key`.
    fn take_notes(&self, session_key: &str) -> Vec<String>;
    /// Tell the operators of `agent` about `subject` (the log, and its risk
    /// profile's approvers where there is a route), once per process: what
    /// only they can change, kept out of what the model reads.
    fn tell_operators(&self, agent: &str, subject: &str, text: String);
    /// The runtime itself, for the modules above it that start or steer
    /// child runs (`Core::of`); tools below it never look.
    fn runtime(self: Arc<Self>) -> Arc<dyn std::any::Any + Send + Sync>;
}
