//! What the store's test files share: a fresh PostgreSQL database per
//! test, the macro that runs one test on both backends, and an approval
//! request to store.

use switchboard_core::Risk;
use switchboard_store::NewApproval;

/// A medium-risk `shell` request `id` (`ls`) that cli:bob's message
/// started, for `approvers` to decide, in no chat and never expiring;
/// a test sets what it is about (`NewApproval { risk, ..approval(..) }`).
#[allow(dead_code, reason = "not every test file stores approvals")]
pub(crate) fn approval<'a>(id: &'a str, approvers: &'a [String]) -> NewApproval<'a> {
    NewApproval {
        id,
        run_id: None,
        requested_by: Some("cli:bob"),
        agent: "main",
        caller_chain: &[],
        tool: "shell",
        summary: "ls",
        risk: Risk::Medium,
        channel: None,
        chat: None,
        thread: None,
        approvers,
        deadline_at: i64::MAX,
        approvals_required: 1,
    }
}

mod fresh_pg;
pub(crate) use fresh_pg::postgres_url;

/// `$test` (an async fn taking a database URL) as two tests: on a fresh
/// SQLite file (in a folder that does not exist yet), and on a fresh
/// PostgreSQL database when `SWITCHBOARD_TEST_POSTGRES_URL` names a server.
#[macro_export]
macro_rules! on_both_backends {
    ($name:ident, $test:ident) => {
        mod $name {
            #[tokio::test]
            async fn sqlite() {
                let dir = tempfile::tempdir().unwrap();
                super::$test(&format!(
                    "sqlite://{}/nested/control_plane.db",
                    dir.path().display()
                ))
                .await;
            }

            #[tokio::test]
            async fn postgres() {
                let Some(url) = $crate::support::postgres_url().await else {
                    eprintln!(
                        "SWITCHBOARD_TEST_POSTGRES_URL not set; {} not exercised on PostgreSQL here",
                        stringify!($name)
                    );
                    return;
                };
                super::$test(&url).await;
            }
        }
    };
}
