//! Control-plane writes per second on SQLite: one statement per commit
//! (sequential and 64-way concurrent) against many statements per commit.
//!
//! `cargo bench -p switchboard-store --bench store_writes -- [N]` (default 5000).

use std::time::Instant;
use switchboard_store::Store;

#[tokio::main]
async fn main() {
    let n: usize = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with("--"))
        .and_then(|a| a.parse().ok())
        .unwrap_or(5000);
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&format!("sqlite://{}/cp.db", dir.path().display()))
        .await
        .unwrap();
    store.sessions().ensure("s", "main", None, None, None).await.unwrap();

    let t = Instant::now();
    for i in 0..n {
        store
            .sessions()
            .append("s", "user", &format!("message {i}"))
            .await
            .unwrap();
    }
    report("sequential, one commit each", n, t);

    let t = Instant::now();
    let mut tasks = Vec::new();
    for w in 0..64 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            for i in (w..n).step_by(64) {
                store
                    .sessions()
                    .append("s", "user", &format!("message {i}"))
                    .await
                    .unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    report("64 concurrent writers, one commit each", n, t);

    let rows: Vec<(&str, String)> = (0..n).map(|i| ("user", format!("message {i}"))).collect();
    let t = Instant::now();
    store.sessions().append_all("s", &rows).await.unwrap();
    report("one transaction", n, t);

    // The same inserts through sqlx's native SQLite driver, for comparison
    // with the Any driver the store uses.
    let url = format!("sqlite://{}/native.db?mode=rwc", dir.path().display());
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    sqlx::query("PRAGMA journal_mode = WAL").execute(&pool).await.unwrap();
    sqlx::query("CREATE TABLE m (id INTEGER PRIMARY KEY, s TEXT, body TEXT)")
        .execute(&pool)
        .await
        .unwrap();
    let t = Instant::now();
    let mut tx = pool.begin().await.unwrap();
    for i in 0..n {
        sqlx::query("INSERT INTO m (s, body) VALUES ($1, $2)")
            .bind("s")
            .bind(format!("message {i}"))
            .execute(&mut *tx)
            .await
            .unwrap();
    }
    tx.commit().await.unwrap();
    report("one transaction, native sqlite driver", n, t);
}

fn report(what: &str, n: usize, t: Instant) {
    let s = t.elapsed().as_secs_f64();
    println!(
        "{what:<40} {n:>6} writes in {:>8.1} ms = {:>8.0} writes/s",
        s * 1e3,
        n as f64 / s
    );
}
