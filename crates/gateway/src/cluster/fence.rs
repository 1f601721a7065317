//! The fence the runtime asks before a side-effecting tool call
//! (`switchboard_runtime::fence`): the turn's inbox message must still be
//! pending and this instance's, and a child run still running here. An
//! instance that stalled past its lease finds its work adopted by another
//! and stops instead of running the tool a second time.

use async_trait::async_trait;
use switchboard_runtime::fence::{Fence, Work};
use switchboard_store::Store;

pub(crate) struct StoreFence {
    store: Store,
}

impl StoreFence {
    pub(crate) fn new(store: Store) -> Self {
        Self { store }
    }
}

const ADOPTED: &str =
    "another gateway of the cluster took this work over (this one stalled past its lease and was taken for dead)";

#[async_trait]
impl Fence for StoreFence {
    async fn still_ours(&self, work: Work<'_>) -> Result<(), String> {
        let unknown = |e: switchboard_store::StoreError| {
            tracing::error!(error = %e, "cannot tell whether work is still this gateway's");
            "the control plane cannot be read, so it is not certain this gateway still owns the work".to_string()
        };
        if let Some(turn) = work.turn
            && !self.store.inbox().still_mine(turn).await.map_err(unknown)?
        {
            return Err(ADOPTED.into());
        }
        if let Some(run) = work.run
            && !self.store.inbox().run_still_mine(run).await.map_err(unknown)?
        {
            return Err(ADOPTED.into());
        }
        Ok(())
    }
}
