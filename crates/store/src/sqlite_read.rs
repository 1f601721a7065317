//! The hot reads of a turn (its session, its history) on the caller's own
//! thread.
//!
//! sqlx runs every SQLite query on a thread of the connection's own and
//! hands the query there and the rows back through channels: two thread
//! wake-ups per read, which under a burst cost more than the read itself
//! (docs/performance.md). The few reads every message makes run here
//! instead, on a small pool of read-only connections, straight on the
//! task's thread; each walks an index for at most a turn's window of rows.
//!
//! They do not wait for locks: a reader in WAL mode does not wait for the
//! writer, and where it would have to (another process recovering the
//! log, an exclusive lock), the connection's busy timeout is zero, the
//! read answers `None` and the caller takes sqlx's pool, which waits on its
//! own thread. One wait is SQLite's own and stays: when a reader races the
//! writer for the log's index it retries, with sleeps that grow after the
//! tenth try (microseconds at first); a long streak of lost races is
//! unlikely in one process, and after about ten seconds SQLite gives up
//! with a protocol error, which is handed over to the pool as well.

use crate::stmt::Arg;
use parking_lot::Mutex;
use rusqlite::{Connection, ErrorCode, OpenFlags, Row};

/// Idle connections kept: one per thread that may read at the same moment
/// (the runtime's workers, one per core, and a few others).
fn keep() -> usize {
    std::thread::available_parallelism().map_or(4, std::num::NonZero::get) + 2
}

/// A row type read here.
pub(crate) trait InlineRow: Sized {
    fn from_row(row: &Row<'_>) -> rusqlite::Result<Self>;
}

pub(crate) struct InlineReader {
    path: String,
    idle: Mutex<Vec<Connection>>,
    keep: usize,
}

impl InlineReader {
    pub(crate) fn new(path: &str) -> Self {
        Self {
            path: path.to_string(),
            idle: Mutex::new(Vec::new()),
            keep: keep(),
        }
    }

    /// Close the idle connections (a read after this opens one again).
    pub(crate) fn close(&self) {
        self.idle.lock().clear();
    }

    /// The rows of `sql` with `args` (`$1` is `args[0]`); `None` when the
    /// database would make the read wait (use the pool then).
    pub(crate) fn rows<T: InlineRow>(&self, sql: &str, args: &[Arg]) -> Option<rusqlite::Result<Vec<T>>> {
        let conn = match self.idle.lock().pop() {
            Some(c) => c,
            None => match self.open() {
                Ok(c) => c,
                Err(e) => return settle(e),
            },
        };
        let result = query(&conn, sql, args);
        let mut idle = self.idle.lock();
        if idle.len() < self.keep {
            idle.push(conn);
        }
        drop(idle);
        match result {
            Ok(rows) => Some(Ok(rows)),
            Err(e) => settle(e),
        }
    }

    fn open(&self) -> rusqlite::Result<Connection> {
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        // No waiting on a tokio thread: busy means "take the pool".
        conn.busy_timeout(std::time::Duration::ZERO)?;
        // A small page cache (the OS caches the file too); sorts in memory.
        conn.execute_batch("PRAGMA cache_size = -512; PRAGMA temp_store = MEMORY;")?;
        conn.set_prepared_statement_cache_capacity(16);
        Ok(conn)
    }
}

fn query<T: InlineRow>(conn: &Connection, sql: &str, args: &[Arg]) -> rusqlite::Result<Vec<T>> {
    let mut stmt = conn.prepare_cached(sql)?;
    // A missing placeholder has no SQLite code: `settle` never takes it
    // for a busy database.
    crate::stmt::bind_sqlite(&mut stmt, args)?;
    let mut rows = stmt.raw_query();
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        out.push(T::from_row(row)?);
    }
    Ok(out)
}

/// A read that would wait (or that SQLite gave up retrying) is `None`;
/// any other failure is an error.
fn settle<T>(e: rusqlite::Error) -> Option<rusqlite::Result<T>> {
    match e.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked | ErrorCode::FileLockingProtocolFailed) => None,
        _ => Some(Err(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Pair(String, i64);

    impl InlineRow for Pair {
        fn from_row(row: &Row<'_>) -> rusqlite::Result<Self> {
            Ok(Pair(row.get(0)?, row.get(1)?))
        }
    }

    fn database(dir: &tempfile::TempDir, journal: &str) -> (String, Connection) {
        let path = dir.path().join("r.db").display().to_string();
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(&format!(
            "PRAGMA journal_mode = {journal}; CREATE TABLE t (k TEXT, n INTEGER);
             INSERT INTO t VALUES ('a', 1), ('b', 2), ('c', 3);"
        ))
        .unwrap();
        (path, conn)
    }

    #[test]
    fn reads_rows_with_placeholders_bound_by_number() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _writer) = database(&dir, "WAL");
        let reader = InlineReader::new(&path);
        // `$2` stands before `$1`: bound by name, not by position.
        let rows: Vec<Pair> = reader
            .rows(
                "SELECT k, n FROM t WHERE n >= $2 AND k <> $1 ORDER BY n",
                &[Arg::from("c"), Arg::from(2i64)],
            )
            .expect("not busy")
            .unwrap();
        let got: Vec<(String, i64)> = rows.into_iter().map(|Pair(k, n)| (k, n)).collect();
        assert_eq!(got, [("b".to_string(), 2)]);
        // A statement that cannot run is an error, not a silent fallback.
        let bad = reader.rows::<Pair>("SELECT k, n FROM missing", &[]).expect("not busy");
        assert!(bad.unwrap_err().to_string().contains("missing"));
    }

    #[test]
    fn a_read_that_would_wait_hands_over_instead() {
        let dir = tempfile::tempdir().unwrap();
        // A rollback journal with a write holding the file's exclusive
        // lock: a reader there must wait (in WAL mode it never has to).
        let (path, writer) = database(&dir, "DELETE");
        let reader = InlineReader::new(&path);
        writer
            .execute_batch("BEGIN EXCLUSIVE; UPDATE t SET n = n + 10;")
            .unwrap();
        let started = std::time::Instant::now();
        assert!(
            reader.rows::<Pair>("SELECT k, n FROM t", &[]).is_none(),
            "busy reads are handed over"
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(1),
            "and without waiting"
        );
        writer.execute_batch("COMMIT").unwrap();
        let rows = reader
            .rows::<Pair>("SELECT k, n FROM t ORDER BY n", &[])
            .unwrap()
            .unwrap();
        assert_eq!(rows.iter().map(|p| p.1).collect::<Vec<_>>(), [11, 12, 13]);
        assert_eq!(rows[0].0, "a");
    }
}
