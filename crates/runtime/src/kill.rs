//! Stopping a run and everything below it (`/subagents kill`, `/stop`, the
//! `subagents` tool).

use crate::core::Core;
use switchboard_store::{RunEnd, RunRow, RunStatus};

impl Core {
    /// Stop `roots` and all their descendants: gather the whole tree first,
    /// record every ending, then stop the work (cancelling a parent first
    /// would let its children record their own, uninformative endings).
    /// Returns the short ids of the runs stopped.
    pub async fn kill_tree(&self, roots: Vec<RunRow>, reason: &str) -> Vec<String> {
        let mut tree = Vec::new();
        let mut queue = roots;
        while let Some(r) = queue.pop() {
            match self.store.runs().children(&r.id).await {
                Ok(kids) => queue.extend(kids),
                Err(e) => tracing::error!(run_id = %r.id, error = %e, "cannot read a run's children"),
            }
            tree.push(r);
        }
        let mut killed = Vec::new();
        for r in tree.iter().filter(|r| r.status == RunStatus::Running) {
            let end = RunEnd {
                error: Some(reason),
                ..RunEnd::default()
            };
            if matches!(
                self.store.runs().finish(&r.id, RunStatus::Cancelled, &end).await,
                Ok(true)
            ) {
                killed.push(r.id[..8.min(r.id.len())].to_string());
            }
        }
        for r in &tree {
            self.live.cancel_run(&r.id);
        }
        if !killed.is_empty() {
            // Runs of other gateways stop at once.
            self.store.signal().await;
        }
        killed
    }
}
