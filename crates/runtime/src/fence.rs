//! Whether work still belongs to this gateway. When several gateways share
//! a database, one that stalls past its lease is taken for dead and its
//! turns and runs are adopted by another; if the stalled one wakes up, it
//! must not go on acting for them (a tool would run twice, two answers
//! would be sent). Before every call of a tool that changes anything, the
//! agent loop asks the fence (one cheap read); the gateway installs it.

use async_trait::async_trait;

/// What a side-effecting tool call is about to act for.
#[derive(Debug, Clone, Copy)]
pub struct Work<'a> {
    /// The inbox message the turn answers, when it answers one.
    pub turn: Option<&'a str>,
    /// The child run, when it is one.
    pub run: Option<&'a str>,
}

/// Why work is not, or may not be, this process's any more; its text is
/// told to the model, and the turn is cancelled.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NotOurs {
    /// Another gateway of the cluster adopted it.
    #[error(
        "another gateway of the cluster took this work over (this one stalled past its lease and was taken for dead)"
    )]
    Adopted,
    /// The control plane cannot be read: unknown counts as not ours
    /// (fail closed).
    #[error("the control plane cannot be read, so it is not certain this gateway still owns the work")]
    Unknown(#[source] switchboard_store::StoreError),
}

/// Answers whether work is still this process's (see the module doc).
#[async_trait]
pub trait Fence: Send + Sync {
    /// `Ok(())` while it is; otherwise why not.
    async fn still_ours(&self, work: Work<'_>) -> Result<(), NotOurs>;
}
