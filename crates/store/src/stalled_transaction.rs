//! Test: a transaction its process left open (stopped in the middle of
//! it) does not hold another instance's writes up for long (see
//! `STALLED_TRANSACTION` in lib.rs). Runs when `SWITCHBOARD_TEST_POSTGRES_URL`
//! names a server.

use crate::{Pools, SessionPlace, Store};
use std::time::Duration;

#[path = "../tests/support/fresh_pg.rs"]
mod fresh_pg;

#[tokio::test]
async fn a_transaction_left_open_is_ended_and_frees_its_rows() {
    let Some(url) = fresh_pg::postgres_url().await else {
        eprintln!("SWITCHBOARD_TEST_POSTGRES_URL not set; the stalled transaction test did not run here");
        return;
    };
    let (stalled, adopter) = (Store::open(&url).await.unwrap(), Store::open(&url).await.unwrap());
    let place = SessionPlace::default();
    let Pools::Postgres(pool) = &stalled.pools else {
        unreachable!("opened on PostgreSQL")
    };
    // The stalled process locked the session's row, then stopped.
    let mut tx = pool.begin().await.unwrap();
    sqlx::query(
        "INSERT INTO sessions (key, agent, history_from, created_at, updated_at) VALUES ('s', 'main', 0, 1, 1)
         ON CONFLICT (key) DO UPDATE SET updated_at = excluded.updated_at",
    )
    .execute(&mut *tx)
    .await
    .unwrap();
    // The instance that adopted its work opens the same session's turn.
    let opened = tokio::time::timeout(
        Duration::from_secs(60),
        adopter
            .sessions()
            .open_turn(("s", "main", place), Some("t"), &[("user", "{}".into())]),
    )
    .await;
    assert!(
        matches!(opened, Ok(Ok(()))),
        "the row stayed locked by the open transaction: {opened:?}"
    );
    // The server ended the stalled connection: its transaction is gone.
    assert!(tx.commit().await.is_err(), "the open transaction was not ended");
    let stored = adopter.sessions().turn_messages("s", "t").await.unwrap();
    assert_eq!(stored.len(), 1, "the adopter's turn is stored");
}
