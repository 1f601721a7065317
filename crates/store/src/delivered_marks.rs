//! Delivered marks written together (group commit of the last write of a
//! reply). The reply's outbox row is written before it is sent; once the
//! platform took it, the row is marked delivered. The sender does not wait
//! for that mark: marks queue here and one writer at a time writes every
//! mark queued so far in one statement, so under load a hundred replies
//! cost one write instead of a hundred, and alone a mark is written at once
//! as before. The crash window (the platform has the reply, the row is not
//! marked yet; the next start sends it again and says so in its log) stays
//! the length of one write: a mark waits at most for the write before it.
//! `Store::close` writes the marks still queued.

use crate::Store;
use crate::stmt::Stmt;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// Statements take 1, 16 or 128 marks (a shorter list repeats its last
/// key), so the few statements there are stay prepared.
const SIZES: [usize; 3] = [1, 16, 128];

/// The queued marks (delivery keys) and whether a writer is at work.
#[derive(Default)]
pub(crate) struct Marks {
    queued: Mutex<Vec<String>>,
    writing: AtomicBool,
}

impl Store {
    /// Queue the delivered mark of outbox row `delivery_key` (see the
    /// module doc); written at once unless a write of marks is under way,
    /// then right after it with the others.
    pub(crate) fn mark_delivered_soon(&self, delivery_key: String) {
        self.marks.queued.lock().push(delivery_key);
        if self.marks.writing.swap(true, Ordering::AcqRel) {
            return;
        }
        let store = self.clone();
        tokio::spawn(async move {
            loop {
                store.write_queued_marks().await;
                store.marks.writing.store(false, Ordering::Release);
                // A mark queued after the last take and before the flag
                // dropped found a writer at work: take it on.
                if store.marks.queued.lock().is_empty() || store.marks.writing.swap(true, Ordering::AcqRel) {
                    return;
                }
            }
        });
    }

    /// Write every queued mark (logged on failure: the row stays pending
    /// and is sent again after the delivery lease, which says so).
    async fn write_queued_marks(&self) {
        let mut keys = std::mem::take(&mut *self.marks.queued.lock());
        while !keys.is_empty() {
            let size = SIZES
                .iter()
                .copied()
                .find(|&n| n >= keys.len())
                .unwrap_or(SIZES[SIZES.len() - 1]);
            let rest = keys.split_off(size.min(keys.len()));
            if let Err(e) = self.exec(delivered(self.now_ms(), &keys, size)).await {
                tracing::error!(replies = keys.len(), error = %e, "cannot mark replies delivered; they may be sent again later");
            }
            keys = rest;
        }
    }

    /// Write the marks still queued, once no writer is at work (a clean
    /// stop leaves none behind).
    pub(crate) async fn flush_marks(&self) {
        for _ in 0..1000 {
            if !self.marks.writing.load(Ordering::Acquire) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
        self.write_queued_marks().await;
    }
}

/// One statement marking the rows of `keys` delivered, with `size` places
/// (one of `SIZES`, at least `keys.len()`).
fn delivered(now: i64, keys: &[String], size: usize) -> Stmt {
    static SQL: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    let sql = SQL.get_or_init(|| {
        SIZES
            .iter()
            .map(|&n| {
                let places: Vec<String> = (0..n).map(|i| format!("${}", i + 2)).collect();
                let sql = format!(
                    "UPDATE outbox SET status = 'delivered', delivered_at = $1, attempts = attempts + 1, last_error = NULL, instance_id = NULL
                     WHERE status = 'pending' AND delivery_key IN ({})",
                    places.join(", ")
                );
                // Made once per size for the process's life.
                &*Box::leak(sql.into_boxed_str())
            })
            .collect()
    });
    let which = SIZES.iter().position(|&n| n == size).unwrap_or(0);
    let mut stmt = Stmt::new(sql[which]).bind(now);
    for i in 0..size {
        let key = &keys[i.min(keys.len() - 1)];
        stmt = stmt.bind(key.as_str());
    }
    stmt
}
