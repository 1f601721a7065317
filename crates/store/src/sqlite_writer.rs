//! Group commit for SQLite on a writer thread of its own.
//!
//! SQLite allows one writer at a time. Every write of the process goes to
//! one connection on one thread: the thread takes all the writes queued
//! since it last looked, runs them inside one transaction and commits once,
//! then answers each writer. Under load many writes share one commit (the
//! costly part of a SQLite write) and each statement costs only SQLite's
//! own work: no hand-off to another thread per statement. Alone, a writer
//! pays one commit as before. A writer is answered only after its
//! statements are committed, so they are durable and visible to readers.
//!
//! A job is atomic: its statements run under a savepoint, and a failing
//! statement undoes the job alone, not the other jobs of the batch.

use crate::stmt::Stmt;
use rusqlite::Connection;
use std::sync::{Arc, mpsc};
use std::time::Duration;
use tokio::sync::oneshot;

/// At most this many jobs share one transaction.
const MAX_BATCH: usize = 4096;

type Reply = oneshot::Sender<Result<Vec<u64>, SqliteWriteError>>;

/// Why the SQLite writer did not write a job, or could not start. A
/// failed commit takes down every job of its batch, so each gets a clone.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum SqliteWriteError {
    /// A required statement changed nothing: a condition of the write no
    /// longer holds (the job changed nothing).
    #[error("{}", crate::stmt::NOT_CHANGED)]
    NotChanged,
    /// SQLite refused a step of the job (`context` says which).
    #[error("{context}: {source}")]
    Sqlite {
        /// The step that failed, as the log says it.
        context: &'static str,
        /// What SQLite said.
        #[source]
        source: Arc<rusqlite::Error>,
    },
    /// SQLite rolled the whole transaction back because of a later job of
    /// the same batch.
    #[error("rolled back with a later write: {0}")]
    RolledBack(#[source] Box<SqliteWriteError>),
    /// A thread of the writer could not be started.
    #[error("cannot start the SQLite {0} thread: {1}")]
    Thread(&'static str, #[source] Arc<std::io::Error>),
    /// The writer thread is gone.
    #[error("the SQLite writer has stopped")]
    Stopped,
}

impl SqliteWriteError {
    fn sqlite(context: &'static str) -> impl FnOnce(rusqlite::Error) -> Self {
        move |e| Self::Sqlite {
            context,
            source: Arc::new(e),
        }
    }

    /// SQLite's result code, when SQLite said why.
    pub(crate) fn code(&self) -> Option<rusqlite::ErrorCode> {
        match self {
            Self::Sqlite { source, .. } => source.sqlite_error_code(),
            Self::RolledBack(inner) => inner.code(),
            _ => None,
        }
    }
}

enum Job {
    Write(Vec<Stmt>, Reply),
    /// Answered once every job queued before it is committed.
    Flush(oneshot::Sender<()>),
}

impl Job {
    fn statements(&self) -> usize {
        match self {
            Job::Write(s, _) => s.len(),
            Job::Flush(_) => 0,
        }
    }
}

pub(crate) struct SqliteWriter {
    jobs: mpsc::Sender<Job>,
}

impl SqliteWriter {
    /// Open the database file at `path` (already created and migrated) and
    /// start the writer thread. The thread ends when the writer is dropped.
    pub(crate) fn start(path: &str) -> Result<Self, SqliteWriteError> {
        let conn = Connection::open(path).map_err(SqliteWriteError::sqlite("open"))?;
        conn.busy_timeout(Duration::from_secs(10))
            .map_err(SqliteWriteError::sqlite("open"))?;
        // WAL is a property of the file (set by the first open); NORMAL
        // syncs at checkpoints, not at every commit; statement journals
        // stay in memory.
        // Checkpoints are the checkpointer's (see `checkpointer`), not
        // the commit's that happens to cross the threshold.
        conn.execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA temp_store = MEMORY; PRAGMA wal_autocheckpoint = 0; PRAGMA cache_size = -1024;",
        )
        .map_err(SqliteWriteError::sqlite("open"))?;
        conn.set_prepared_statement_cache_capacity(64);
        let checkpoints = checkpointer(path)?;
        let (jobs, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("sqlite-writer".into())
            .spawn(move || run(conn, rx, checkpoints))
            .map_err(|e| SqliteWriteError::Thread("writer", Arc::new(e)))?;
        Ok(Self { jobs })
    }

    /// Run `statements` as one atomic job; returns the rows each changed.
    pub(crate) async fn write(&self, statements: Vec<Stmt>) -> Result<Vec<u64>, SqliteWriteError> {
        let (tx, rx) = oneshot::channel();
        self.jobs
            .send(Job::Write(statements, tx))
            .map_err(|_| SqliteWriteError::Stopped)?;
        rx.await.map_err(|_| SqliteWriteError::Stopped)?
    }

    /// Wait until everything queued so far is committed.
    pub(crate) async fn flush(&self) {
        let (tx, rx) = oneshot::channel();
        if self.jobs.send(Job::Flush(tx)).is_ok() {
            let _ = rx.await;
        }
    }
}

fn run(mut conn: Connection, rx: mpsc::Receiver<Job>, checkpoints: mpsc::SyncSender<()>) {
    let mut since_checkpoint = 0;
    while let Ok(first) = rx.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        since_checkpoint += batch.iter().map(Job::statements).sum::<usize>();
        run_batch(&mut conn, batch);
        if since_checkpoint >= CHECKPOINT_EVERY {
            // Full: a checkpoint is asked for already.
            let _ = checkpoints.try_send(());
            since_checkpoint = 0;
        }
    }
}

/// Statements written between checkpoints (SQLite's own default is about
/// 1,000 pages of log; a statement here changes a few).
const CHECKPOINT_EVERY: usize = 400;

/// A thread of its own that copies the log into the database when asked
/// (`PASSIVE`: never waits for readers or the writer, which go on while it
/// runs; with `synchronous = NORMAL` its sync is the only one, and it is
/// off the writer's path). Ends when the writer does.
fn checkpointer(path: &str) -> Result<mpsc::SyncSender<()>, SqliteWriteError> {
    let path = path.to_string();
    let (tx, rx) = mpsc::sync_channel::<()>(1);
    std::thread::Builder::new()
        .name("sqlite-checkpoint".into())
        .spawn(move || {
            // Opened at the first checkpoint: an idle gateway holds no
            // connection for it.
            let mut conn: Option<Connection> = None;
            while rx.recv().is_ok() {
                let done = match &conn {
                    Some(c) => c.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())),
                    None => Connection::open(&path).and_then(|c| {
                        c.busy_timeout(Duration::from_secs(10))?;
                        c.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))?;
                        conn = Some(c);
                        Ok(())
                    }),
                };
                if let Err(e) = done {
                    tracing::warn!(error = %e, "SQLite checkpoint failed; the next one retries");
                }
            }
        })
        .map_err(|e| SqliteWriteError::Thread("checkpoint", Arc::new(e)))?;
    Ok(tx)
}

fn run_batch(conn: &mut Connection, batch: Vec<Job>) {
    let mut done: Vec<(Reply, Result<Vec<u64>, SqliteWriteError>)> = Vec::with_capacity(batch.len());
    let mut flushes = Vec::new();
    let mut open = false;
    for job in batch {
        let (statements, reply) = match job {
            Job::Write(s, r) => (s, r),
            Job::Flush(f) => {
                flushes.push(f);
                continue;
            }
        };
        if !open {
            if let Err(e) = control(conn, "BEGIN IMMEDIATE") {
                let _ = reply.send(Err(SqliteWriteError::sqlite("cannot begin a write")(e)));
                continue;
            }
            open = true;
        }
        let result = run_job(conn, &statements);
        if result.is_err() && conn.is_autocommit() {
            // SQLite rolled the whole transaction back (a full disk, an I/O
            // error): the jobs before this one are lost too.
            if let Err(why) = &result {
                for (_, r) in &mut done {
                    *r = Err(SqliteWriteError::RolledBack(Box::new(why.clone())));
                }
            }
            open = false;
        }
        done.push((reply, result));
    }
    if open && let Err(e) = control(conn, "COMMIT") {
        tracing::error!(error = %e, jobs = done.len(), "group commit failed");
        let _ = conn.execute_batch("ROLLBACK");
        let failed = SqliteWriteError::sqlite("commit failed")(e);
        for (_, r) in &mut done {
            *r = Err(failed.clone());
        }
    }
    for (reply, result) in done {
        let _ = reply.send(result);
    }
    for f in flushes {
        let _ = f.send(());
    }
}

/// One job under a savepoint (only when it has several statements: a
/// single failing statement changes nothing by itself).
fn run_job(conn: &Connection, statements: &[Stmt]) -> Result<Vec<u64>, SqliteWriteError> {
    if let [one] = statements {
        return run_checked(conn, one).map(|n| vec![n]);
    }
    control(conn, "SAVEPOINT job").map_err(SqliteWriteError::sqlite("savepoint"))?;
    let result: Result<Vec<u64>, SqliteWriteError> = statements.iter().map(|s| run_checked(conn, s)).collect();
    let ended = match result {
        Ok(_) => control(conn, "RELEASE job"),
        Err(_) => control(conn, "ROLLBACK TO job").and_then(|()| control(conn, "RELEASE job")),
    };
    match (result, ended) {
        (result, Ok(())) => result,
        // The job's own failure says more than its savepoint's (which
        // SQLite ends with the transaction it rolled back).
        (Err(why), Err(e)) => {
            tracing::debug!(error = %e, "ending a failed job's savepoint");
            Err(why)
        }
        (Ok(_), Err(e)) => Err(SqliteWriteError::sqlite("ending a job's savepoint")(e)),
    }
}

/// One statement; a required one that changed nothing is an error (its
/// job is rolled back).
fn run_checked(conn: &Connection, stmt: &Stmt) -> Result<u64, SqliteWriteError> {
    let n = run_statement(conn, stmt).map_err(SqliteWriteError::sqlite("write refused"))?;
    if stmt.required && n == 0 {
        return Err(SqliteWriteError::NotChanged);
    }
    Ok(n)
}

/// BEGIN, COMMIT or a job's savepoint, prepared once (not parsed again
/// at every job).
fn control(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([]).map(|_| ())
}

/// One statement with its arguments bound (see `stmt::bind_sqlite`).
fn run_statement(conn: &Connection, stmt: &Stmt) -> rusqlite::Result<u64> {
    let mut st = conn.prepare_cached(stmt.sql)?;
    crate::stmt::bind_sqlite(&mut st, &stmt.args)?;
    st.raw_execute().map(|n| n as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn writer(dir: &tempfile::TempDir) -> (SqliteWriter, String) {
        let path = dir.path().join("w.db").display().to_string();
        Connection::open(&path)
            .unwrap()
            .execute_batch("CREATE TABLE t (k TEXT PRIMARY KEY, n BIGINT)")
            .unwrap();
        (SqliteWriter::start(&path).unwrap(), path)
    }

    fn keys(path: &str) -> Vec<String> {
        let conn = Connection::open(path).unwrap();
        let mut st = conn.prepare("SELECT k FROM t ORDER BY k").unwrap();
        st.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
    }

    fn insert(k: &str) -> Stmt {
        Stmt::new("INSERT INTO t (k, n) VALUES ($1, $2)").bind(k).bind(1i64)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_writes_are_all_committed_and_visible() {
        let dir = tempfile::tempdir().unwrap();
        let (w, path) = writer(&dir);
        let w = std::sync::Arc::new(w);
        let tasks: Vec<_> = (0..300)
            .map(|i| {
                let w = w.clone();
                tokio::spawn(async move { w.write(vec![insert(&format!("k{i:03}"))]).await })
            })
            .collect();
        for t in tasks {
            assert_eq!(t.await.unwrap().unwrap(), vec![1]);
        }
        assert_eq!(keys(&path).len(), 300);
    }

    /// The log is copied into the database by the checkpoint thread (the
    /// writer's commits never checkpoint): the file grows while writes go on.
    #[tokio::test]
    async fn the_checkpointer_moves_the_log_into_the_database() {
        let dir = tempfile::tempdir().unwrap();
        let (w, path) = writer(&dir);
        let padding = "x".repeat(2000);
        for i in 0..(2 * CHECKPOINT_EVERY) {
            w.write(vec![insert(&format!("{padding}{i:05}"))]).await.unwrap();
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let size = || std::fs::metadata(&path).unwrap().len();
        while size() < 1_000_000 {
            assert!(
                std::time::Instant::now() < deadline,
                "never checkpointed: {} bytes",
                size()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(keys(&path).len(), 2 * CHECKPOINT_EVERY);
    }

    #[tokio::test]
    async fn a_failing_job_does_not_undo_the_others_in_its_batch() {
        let dir = tempfile::tempdir().unwrap();
        let (w, path) = writer(&dir);
        w.write(vec![insert("dup")]).await.unwrap();
        // Sent back to back: usually one batch, one transaction.
        let (a, b, c) = tokio::join!(
            w.write(vec![insert("a")]),
            w.write(vec![insert("dup")]),
            w.write(vec![insert("c")])
        );
        assert_eq!(a.unwrap(), vec![1]);
        let refused = b.unwrap_err();
        assert!(
            refused.to_string().contains("UNIQUE"),
            "the duplicate is refused: {refused}"
        );
        assert_eq!(refused.code(), Some(rusqlite::ErrorCode::ConstraintViolation));
        assert_eq!(c.unwrap(), vec![1]);
        assert_eq!(keys(&path), ["a", "c", "dup"]);
    }

    #[tokio::test]
    async fn a_job_is_atomic() {
        let dir = tempfile::tempdir().unwrap();
        let (w, path) = writer(&dir);
        w.write(vec![insert("dup")]).await.unwrap();
        let r = w.write(vec![insert("first"), insert("dup"), insert("third")]).await;
        assert!(r.is_err());
        assert_eq!(keys(&path), ["dup"], "nothing of the failed job stays");
        let changed = w
            .write(vec![
                insert("x"),
                Stmt::new("UPDATE t SET n = n + 1 WHERE k IN ($1, $2)")
                    .bind("x")
                    .bind("dup"),
            ])
            .await;
        assert_eq!(changed.unwrap(), vec![1, 2]);
    }

    #[tokio::test]
    async fn nulls_and_missing_placeholders() {
        let dir = tempfile::tempdir().unwrap();
        let (w, path) = writer(&dir);
        w.write(vec![
            Stmt::new("INSERT INTO t (k, n) VALUES ($1, $2)")
                .bind("z")
                .bind(None::<i64>),
        ])
        .await
        .unwrap();
        let n: Option<i64> = Connection::open(&path)
            .unwrap()
            .query_row("SELECT n FROM t WHERE k = 'z'", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, None);
        let err = w
            .write(vec![Stmt::new("INSERT INTO t (k) VALUES ($1)").bind("y").bind(2i64)])
            .await
            .unwrap_err();
        assert!(err.to_string().contains("$2"), "{err}");
        w.flush().await;
        assert_eq!(keys(&path), ["z"]);
    }
}
