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

/// Answers whether work is still this process's (see the module doc).
#[async_trait]
pub trait Fence: Send + Sync {
    /// `Ok(())` while it is; otherwise why not (told to the model, and the
    /// turn is cancelled). Unknown (the database cannot be read) counts as
    /// not ours: fail closed.
    async fn still_ours(&self, work: Work<'_>) -> Result<(), String>;
}
