//! Supervision for channel adapter tasks: one bad message must never stop
//! a channel. A supervised task that panics or ends on its own is logged as
//! an error and started again after a backoff; a piece of work that panics
//! (converting one platform update) is logged and skipped.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;

/// How a supervised task ended when it did not panic.
#[derive(Debug)]
pub enum TaskEnd {
    /// The gateway is stopping (the router hung up): do not restart.
    Stopped,
    /// The task gave up; it is restarted after a backoff.
    Failed(String),
}

/// Backoff between restarts: doubles from `FIRST` to `MAX`, and starts
/// over when a task ran for `HEALTHY` before it ended.
const FIRST: Duration = Duration::from_millis(500);
const MAX: Duration = Duration::from_secs(30);
const HEALTHY: Duration = Duration::from_secs(120);

/// The receiving task of a channel, kept so the channel can be stopped
/// (and started again later).
#[derive(Debug, Default)]
pub struct Receiving(std::sync::Mutex<Option<JoinHandle<()>>>);

impl Receiving {
    /// Keep `task` as the running one (stopping one kept before).
    pub fn set(&self, task: JoinHandle<()>) {
        let old = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .replace(task);
        if let Some(old) = old {
            old.abort();
        }
    }

    /// Stop the running task, if any.
    pub fn stop(&self) {
        if let Some(t) = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take() {
            t.abort();
        }
    }
}

/// Run `make()` as a task named `name`, restarting it with backoff whenever
/// it panics or fails, until it ends with [`TaskEnd::Stopped`] or the
/// returned handle is aborted.
pub fn supervise<F, Fut>(name: String, make: F) -> JoinHandle<()>
where
    F: Fn() -> Fut + Send + 'static,
    Fut: Future<Output = TaskEnd> + Send + 'static,
{
    tokio::spawn(async move {
        let mut backoff = FIRST;
        loop {
            let started = Instant::now();
            let task = tokio::spawn(make());
            // Aborting the supervisor must stop the task too.
            let guard = AbortOnDrop(task.abort_handle());
            let why = match task.await {
                Ok(TaskEnd::Stopped) => return,
                Ok(TaskEnd::Failed(e)) => e,
                Err(e) if e.is_panic() => format!("panicked: {}", panic_text(e.into_panic().as_ref())),
                Err(_) => return,
            };
            drop(guard);
            if started.elapsed() >= HEALTHY {
                backoff = FIRST;
            }
            tracing::error!(task = %name, error = %why, ?backoff, "channel task stopped unexpectedly; restarting");
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(MAX);
        }
    })
}

struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Run `f` (converting one platform update, say); a panic is logged with
/// `what` and becomes `None`, so the caller skips that one item.
pub fn guarded<T>(channel: &str, what: &str, f: impl FnOnce() -> Option<T>) -> Option<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(p) => {
            tracing::error!(%channel, item = %what, panic = %panic_text(p.as_ref()), "could not convert an update; skipped");
            None
        }
    }
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[tokio::test(start_paused = true)]
    async fn a_panicking_task_is_restarted_until_it_stops() {
        let runs = Arc::new(AtomicU32::new(0));
        let r = runs.clone();
        let handle = supervise("test".into(), move || {
            let r = r.clone();
            async move {
                match r.fetch_add(1, Ordering::SeqCst) {
                    0 => panic!("boom"),
                    1 => TaskEnd::Failed("gave up".into()),
                    _ => TaskEnd::Stopped,
                }
            }
        });
        handle.await.unwrap();
        assert_eq!(runs.load(Ordering::SeqCst), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn aborting_the_supervisor_stops_the_task() {
        struct Alive(Arc<AtomicU32>);
        impl Drop for Alive {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::SeqCst);
            }
        }
        let alive = Arc::new(AtomicU32::new(0));
        let a = alive.clone();
        let handle = supervise("test".into(), move || {
            let a = a.clone();
            async move {
                a.fetch_add(1, Ordering::SeqCst);
                let _alive = Alive(a);
                std::future::pending::<()>().await;
                TaskEnd::Stopped
            }
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert_eq!(alive.load(Ordering::SeqCst), 1);
        handle.abort();
        tokio::time::sleep(Duration::from_secs(60)).await;
        assert_eq!(alive.load(Ordering::SeqCst), 0, "the supervised task was not stopped");
    }

    #[test]
    fn a_panicking_conversion_is_skipped() {
        let v: Option<u32> = guarded("test", "update 1", || panic!("bad slice"));
        assert_eq!(v, None);
        assert_eq!(guarded("test", "update 2", || Some(2)), Some(2));
    }
}
