//! A database migrated by a newer build (docs/operations.md, "Upgrades"):
//! this build works beside it when it knows the oldest schema the newer
//! one recorded as needed, and otherwise refuses to open it, naming the
//! version to run. An inbox row of a kind only newer builds read is never
//! adopted by this one. On SQLite and, when a server is given, PostgreSQL.

mod support;

use switchboard_core::Risk;
use switchboard_store::{NEEDS_SCHEMA, NewApproval, NewInbound, Store};

on_both_backends!(newer_schemas, newer_schema);
on_both_backends!(older_schemas, older_schema);
on_both_backends!(unknown_risk_words, unknown_risk_word);

/// Run `sql` on the database at `url`, beside the store.
async fn raw(url: &str, sql: &str) {
    if url.starts_with("sqlite://") {
        let pool = sqlx::SqlitePool::connect(url).await.unwrap();
        sqlx::query(sqlx::AssertSqlSafe(sql.to_string()))
            .execute(&pool)
            .await
            .unwrap();
        pool.close().await;
    } else {
        let pool = sqlx::PgPool::connect(url).await.unwrap();
        sqlx::query(sqlx::AssertSqlSafe(sql.to_string()))
            .execute(&pool)
            .await
            .unwrap();
        pool.close().await;
    }
}

/// The database as a newer build would leave it: its migration `version`
/// applied, recorded as needing `needs`, by build `by`.
async fn migrated_by_newer(url: &str, version: i64, needs: i64, by: &str) {
    raw(
        url,
        &format!(
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time)
             SELECT {version}, 'from a newer build', success, checksum, execution_time
             FROM _sqlx_migrations WHERE version = {NEEDS_SCHEMA}"
        ),
    )
    .await;
    raw(
        url,
        &format!(
            "INSERT INTO schema_compat (schema_version, needs_schema, written_by) VALUES ({version}, {needs}, '{by}')"
        ),
    )
    .await;
}

async fn newer_schema(url: &str) {
    let store = Store::open(url).await.unwrap();
    let ours = store.schema();
    assert!(ours >= NEEDS_SCHEMA);
    let me = store.register_instance("here", 1, "run").await.unwrap();
    let row = store
        .instances()
        .await
        .unwrap()
        .into_iter()
        .find(|i| i.id == me)
        .unwrap();
    assert_eq!(
        (row.version.as_str(), row.schema_version),
        (switchboard_store::BUILD_VERSION, ours)
    );
    // Two messages left by a gone instance: one any build reads, one of a
    // kind only a newer build knows.
    let message = |key: &str| NewInbound {
        key: key.into(),
        channel: "telegram.main".into(),
        chat: "11".into(),
        platform_id: key.into(),
        sender: "tg:11".into(),
        body: "{}".into(),
    };
    store
        .inbox()
        .take("telegram.main", &[message("old-kind"), message("new-kind")], None, None)
        .await
        .unwrap();
    raw(
        url,
        &format!("UPDATE inbox SET needs_schema = {} WHERE key = 'new-kind'", ours + 1),
    )
    .await;
    raw(url, &format!("DELETE FROM instances WHERE id = '{me}'")).await;
    store.register_anew("here", 1, "run").await.unwrap();
    let adopted: Vec<String> = store
        .inbox()
        .adopt_orphans()
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.key)
        .collect();
    assert_eq!(adopted, ["old-kind"], "the newer kind is left for a newer build");
    store.close().await;

    // A newer build that added only what this one may ignore.
    migrated_by_newer(url, ours + 1, ours, "9.1.0").await;
    let beside = Store::open(url).await.expect("works beside a compatible newer schema");
    beside.close().await;

    // One that took away what this build uses.
    migrated_by_newer(url, ours + 2, ours + 2, "9.2.0").await;
    let refused = Store::open(url).await.err().expect("refused").to_string();
    assert!(
        refused.contains(&format!("the database's schema is {}", ours + 2))
            && refused.contains("run switchboard 9.2.0 or newer"),
        "{refused}"
    );
}

/// A database an older build migrated (schema 12: no build columns) is
/// read as it is: its instances are listed with no build named.
async fn older_schema(url: &str) {
    let store = Store::open(url).await.unwrap();
    store.register_instance("old", 7, "run").await.unwrap();
    store.close().await;
    raw(url, "ALTER TABLE instances DROP COLUMN version").await;
    raw(url, "ALTER TABLE instances DROP COLUMN schema_version").await;
    raw(
        url,
        &format!("DELETE FROM _sqlx_migrations WHERE version >= {NEEDS_SCHEMA}"),
    )
    .await;
    let old = Store::open_existing(url).await.unwrap();
    assert_eq!(old.database_schema().await.unwrap(), NEEDS_SCHEMA - 1);
    let listed = old.instances().await.expect("listed beside an older schema");
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (listed[0].pid, listed[0].version.as_str(), listed[0].schema_version),
        (7, "", 0)
    );
    old.close().await;
}

/// An approval whose risk a newer build wrote with a word this one does
/// not know reads as high (fail closed), and the row still reads.
async fn unknown_risk_word(url: &str) {
    let store = Store::open(url).await.unwrap();
    let ops = ["cli:ops".to_string()];
    for id in ["known", "newer"] {
        let low = NewApproval {
            risk: Risk::Low,
            ..support::approval(id, &ops)
        };
        store.approvals().insert(&low).await.unwrap();
    }
    raw(url, "UPDATE approvals SET risk = 'critical' WHERE id = 'newer'").await;
    let read = |id: &'static str| {
        let store = store.clone();
        async move { store.approvals().get(id).await.unwrap().unwrap().risk }
    };
    assert_eq!((read("known").await, read("newer").await), (Risk::Low, Risk::High));
}
