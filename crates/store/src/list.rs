//! List columns (`runs.owner_chain`, `approvals.caller_chain`,
//! `approvals.approvers`): one encoding, a JSON array of strings, written
//! by [`encode`] and decoded once, when a row is read, into `Vec<String>`.

/// A list column as stored; NULL reads as an empty list.
#[derive(sqlx::Type)]
#[sqlx(transparent)]
pub(crate) struct StoredList(Option<String>);

impl TryFrom<StoredList> for Vec<String> {
    type Error = String;
    fn try_from(stored: StoredList) -> Result<Self, String> {
        decode(stored.0.as_deref())
    }
}

/// The list a column holds. Caller chains written before the lists were
/// unified read as `a > b`.
pub(crate) fn decode(text: Option<&str>) -> Result<Vec<String>, String> {
    match text.map(str::trim) {
        None | Some("") => Ok(Vec::new()),
        Some(t) if t.starts_with('[') => {
            serde_json::from_str(t).map_err(|e| format!("a list column is not a JSON list of strings: {e}"))
        }
        Some(t) => Ok(t.split(" > ").map(str::to_string).collect()),
    }
}

/// How a list is stored.
pub(crate) fn encode(list: &[String]) -> String {
    serde_json::to_string(list).unwrap_or_else(|_| "[]".into())
}

#[cfg(test)]
mod tests {
    use super::{decode, encode};

    #[test]
    fn lists_round_trip_and_old_chains_still_read() {
        let list = vec!["main".to_string(), "reviewer \"x\"".to_string()];
        assert_eq!(decode(Some(&encode(&list))), Ok(list));
        assert_eq!(decode(None), Ok(Vec::new()));
        assert_eq!(decode(Some("")), Ok(Vec::new()));
        assert_eq!(
            decode(Some("main > worker")),
            Ok(vec!["main".to_string(), "worker".to_string()])
        );
        assert!(decode(Some("[not json")).is_err());
    }
}
