//! List columns (`runs.owner_chain`, `approvals.caller_chain`,
//! `approvals.approvers`): one encoding, a JSON array of strings, written
//! by [`encode`] and decoded once, when a row is read, into `Vec<String>`.
//!
//! A value that does not decode never fails the read it is part of (one
//! odd row must not stop start-up or a sweep): it reads as an empty list,
//! which fails closed (no approver, no owner), and a warning is logged.

/// A list column as stored; NULL reads as an empty list.
#[derive(sqlx::Type)]
#[sqlx(transparent)]
pub(crate) struct StoredList(Option<String>);

impl TryFrom<StoredList> for Vec<String> {
    type Error = String;
    fn try_from(stored: StoredList) -> Result<Self, String> {
        Ok(decode(stored.0.as_deref()).unwrap_or_else(|e| {
            tracing::warn!(error = %e, "a stored list does not decode; read as empty");
            Vec::new()
        }))
    }
}

/// A caller chain as stored: a list column, or (rows written before the
/// lists were unified) `a > b`.
#[derive(sqlx::Type)]
#[sqlx(transparent)]
pub(crate) struct StoredChain(Option<String>);

impl TryFrom<StoredChain> for Vec<String> {
    type Error = String;
    fn try_from(stored: StoredChain) -> Result<Self, String> {
        match stored.0.as_deref().map(str::trim) {
            Some(t) if !t.is_empty() && !t.starts_with('[') => Ok(t.split(" > ").map(str::to_string).collect()),
            _ => Vec::try_from(StoredList(stored.0)),
        }
    }
}

/// The list a column holds.
pub(crate) fn decode(text: Option<&str>) -> Result<Vec<String>, String> {
    match text.map(str::trim) {
        None | Some("") => Ok(Vec::new()),
        Some(t) => serde_json::from_str(t).map_err(|e| format!("not a JSON list of strings: {e}")),
    }
}

/// How a list is stored.
pub(crate) fn encode(list: &[String]) -> String {
    serde_json::to_string(list).unwrap_or_else(|_| "[]".into())
}

#[cfg(test)]
mod tests {
    use super::{StoredChain, StoredList, decode, encode};

    fn list(s: Option<&str>) -> Vec<String> {
        Vec::try_from(StoredList(s.map(str::to_string))).unwrap()
    }

    fn chain(s: Option<&str>) -> Vec<String> {
        Vec::try_from(StoredChain(s.map(str::to_string))).unwrap()
    }

    #[test]
    fn lists_round_trip_and_odd_values_read_as_empty() {
        let names = vec!["main".to_string(), "reviewer \"x\"".to_string()];
        assert_eq!(decode(Some(&encode(&names))), Ok(names.clone()));
        assert_eq!(list(Some(&encode(&names))), names);
        assert!(list(None).is_empty() && list(Some("")).is_empty());
        // Neither a broken list nor a bare word lets anyone in.
        assert!(list(Some("[not json")).is_empty());
        assert!(list(Some("*")).is_empty());
        assert!(list(Some("[1, 2]")).is_empty());
    }

    #[test]
    fn caller_chains_read_both_encodings() {
        assert_eq!(
            chain(Some("main > worker")),
            vec!["main".to_string(), "worker".to_string()]
        );
        assert_eq!(
            chain(Some(r#"["main","worker"]"#)),
            vec!["main".to_string(), "worker".to_string()]
        );
        assert!(chain(None).is_empty() && chain(Some("[broken")).is_empty());
    }
}
