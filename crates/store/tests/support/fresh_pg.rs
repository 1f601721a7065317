//! A fresh database on the PostgreSQL test server, for the store's tests
//! (included by `support` and by the crate's own PostgreSQL unit tests).

/// A fresh database on the PostgreSQL test server, if there is one.
pub(crate) async fn postgres_url() -> Option<String> {
    let admin = std::env::var("SWITCHBOARD_TEST_POSTGRES_URL").ok()?;
    let name = format!("sb_test_{}", uuid::Uuid::new_v4().simple());
    let pool = sqlx::PgPool::connect(&admin).await.expect("postgres admin connection");
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&pool)
        .await
        .unwrap();
    let (base, _) = admin.rsplit_once('/').unwrap();
    Some(format!("{base}/{name}"))
}
