//! What the gateway says when its database does not take writes (the
//! volume full or read-only, the database away): the person is told once
//! that their message is kept and will be answered, and the log says what
//! to fix (docs/operations.md, "A full disk").

use switchboard_store::StoreError;

/// What a person whose message cannot be stored or answered now is told,
/// once.
pub(crate) const WAITS: &str =
    "I can't answer right now: my storage is unavailable. Your message is kept and I'll answer it as soon as I can.";

/// What the operator should do about `e`, for the log.
pub(crate) fn remedy(e: &StoreError) -> &'static str {
    let text = e.to_string().to_ascii_lowercase();
    if text.contains("disk is full") || text.contains("no space left") {
        "the database's volume is full: free space there (the database file and its -wal file live there; old backups and logs are the usual culprits); messages wait on the platform and are taken once there is room"
    } else if text.contains("readonly") || text.contains("read-only") {
        "the database (or its folder) is read-only: make it writable for the gateway's user; messages wait on the platform meanwhile"
    } else {
        "the database does not take writes; messages wait on the platform and are taken once it does"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_remedy_names_what_to_free() {
        let full = StoreError::Write("commit failed: database or disk is full".into());
        assert!(remedy(&full).starts_with("the database's volume is full"));
        let ro = StoreError::Write("attempt to write a readonly database".into());
        assert!(remedy(&ro).contains("read-only"));
    }
}
