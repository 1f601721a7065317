//! What the gateway says when its database does not take writes (the
//! volume full or read-only, the database away): the person is told once
//! that their message is kept and will be answered, and the log says what
//! to fix (docs/operations.md, "A full disk").

use switchboard_store::{StoreError, Unwritable};

/// What a person whose message cannot be stored or answered now is told,
/// once.
pub(crate) const WAITS: &str =
    "I can't answer right now: my storage is unavailable. Your message is kept and I'll answer it as soon as I can.";

/// What the operator should do about `e`, for the log.
pub(crate) fn remedy(e: &StoreError) -> &'static str {
    remedy_for(e.unwritable())
}

/// The remedy when the database said why it takes no writes (`why`).
fn remedy_for(why: Option<Unwritable>) -> &'static str {
    match why {
        Some(Unwritable::Full) => {
            "the database's volume is full: free space there (the database file and its -wal file live there; old backups and logs are the usual culprits); messages wait on the platform and are taken once there is room"
        }
        Some(Unwritable::ReadOnly) => {
            "the database (or its folder) is read-only: make it writable for the gateway's user; messages wait on the platform meanwhile"
        }
        _ => "the database does not take writes; messages wait on the platform and are taken once it does",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The store tells a full or read-only database by its codes
    /// (`StoreError::unwritable`, tested there; tests/disk_full.rs runs
    /// the whole way on a full volume); each gets its own remedy.
    #[test]
    fn the_remedy_names_what_to_fix() {
        assert!(remedy_for(Some(Unwritable::Full)).starts_with("the database's volume is full"));
        assert!(remedy_for(Some(Unwritable::ReadOnly)).contains("read-only"));
        assert!(remedy(&StoreError::NotChanged).starts_with("the database does not take writes"));
    }
}
