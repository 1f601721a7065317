//! The fence the runtime asks before a side-effecting tool call
//! (`switchboard_runtime::fence`): the turn's inbox message must still be
//! pending and this instance's, and a child run still running here. An
//! instance that stalled past its lease finds its work adopted by another
//! and stops instead of running the tool a second time.

use async_trait::async_trait;
use switchboard_runtime::fence::{Fence, NotOurs, Work};
use switchboard_store::Store;

pub(crate) struct StoreFence {
    store: Store,
}

impl StoreFence {
    pub(crate) fn new(store: Store) -> Self {
        Self { store }
    }
}

#[async_trait]
impl Fence for StoreFence {
    async fn still_ours(&self, work: Work<'_>) -> Result<(), NotOurs> {
        let unknown = |e: switchboard_store::StoreError| {
            tracing::error!(error = %e, "cannot tell whether work is still this gateway's");
            NotOurs::Unknown(e)
        };
        if let Some(turn) = work.turn
            && !self.store.inbox().still_mine(turn).await.map_err(unknown)?
        {
            return Err(NotOurs::Adopted);
        }
        if let Some(run) = work.run
            && !self.store.inbox().run_still_mine(run).await.map_err(unknown)?
        {
            return Err(NotOurs::Adopted);
        }
        Ok(())
    }
}
