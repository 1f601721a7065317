//! Group commit for SQLite: writers run their statements inside one shared
//! transaction and wait until it commits; a committer task commits as soon
//! as there is work. Under load many writers share one commit (the costly
//! part of a SQLite write); alone, a writer pays one commit as before. A
//! writer returns only after its statements are durable and visible.

use sqlx::{Sqlite, SqlitePool, Transaction};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::{MutexGuard, Notify, watch};

pub(crate) struct GroupWriter {
    pool: SqlitePool,
    open: tokio::sync::Mutex<Option<Transaction<'static, Sqlite>>>,
    /// The epoch the open transaction will commit as.
    epoch: AtomicU64,
    /// The last epoch that finished (committed or failed).
    finished: watch::Sender<u64>,
    /// Recent epochs whose commit failed.
    failed: Mutex<VecDeque<(u64, String)>>,
    kick: Arc<Notify>,
}

pub(crate) struct Guard<'a> {
    writer: &'a GroupWriter,
    open: MutexGuard<'a, Option<Transaction<'static, Sqlite>>>,
}

impl Guard<'_> {
    pub fn tx(&mut self) -> &mut Transaction<'static, Sqlite> {
        self.open.as_mut().expect("a transaction is open while the guard lives")
    }

    /// Leave the statements to the next commit; returns its epoch.
    pub fn release(self) -> u64 {
        let epoch = self.writer.epoch.load(Ordering::SeqCst);
        drop(self.open);
        self.writer.kick.notify_one();
        epoch
    }
}

impl GroupWriter {
    pub fn start(pool: SqlitePool) -> Arc<Self> {
        let (finished, _) = watch::channel(0);
        let writer = Arc::new(Self {
            pool,
            open: tokio::sync::Mutex::new(None),
            epoch: AtomicU64::new(1),
            finished,
            failed: Mutex::new(VecDeque::new()),
            kick: Arc::new(Notify::new()),
        });
        // The committer holds the writer weakly, so it ends with the store.
        let (committer, kick) = (Arc::downgrade(&writer), writer.kick.clone());
        tokio::spawn(async move {
            loop {
                kick.notified().await;
                let Some(w) = committer.upgrade() else { return };
                w.commit_open().await;
            }
        });
        writer
    }

    async fn commit_open(&self) {
        let mut open = self.open.lock().await;
        let Some(tx) = open.take() else { return };
        let epoch = self.epoch.fetch_add(1, Ordering::SeqCst);
        if let Err(e) = tx.commit().await {
            tracing::error!(epoch, error = %e, "group commit failed");
            let mut failed = self.failed.lock().unwrap_or_else(|p| p.into_inner());
            failed.push_back((epoch, e.to_string()));
            while failed.len() > 256 {
                failed.pop_front();
            }
        }
        drop(open);
        self.finished.send_replace(epoch);
    }

    /// Lock the shared transaction (opening one if needed).
    pub async fn lock(&self) -> Result<Guard<'_>, sqlx::Error> {
        let mut open = self.open.lock().await;
        if open.is_none() {
            *open = Some(self.pool.begin().await?);
        }
        Ok(Guard { writer: self, open })
    }

    /// Wait until epoch `epoch` has committed.
    pub async fn committed(&self, epoch: u64) -> Result<(), sqlx::Error> {
        let mut rx = self.finished.subscribe();
        while *rx.borrow_and_update() < epoch {
            if rx.changed().await.is_err() {
                return Err(sqlx::Error::PoolClosed);
            }
        }
        let failed = self.failed.lock().unwrap_or_else(|p| p.into_inner());
        match failed.iter().find(|(e, _)| *e == epoch) {
            Some((_, msg)) => Err(sqlx::Error::Protocol(format!("commit failed: {msg}"))),
            None => Ok(()),
        }
    }

    /// Commit whatever is open now (for a clean shutdown).
    pub async fn flush(&self) {
        self.commit_open().await;
    }
}
