//! Where a run sits in its tree: depth, owner chain, budgets it shares
//! with its ancestors, and where its work was asked for.

use crate::progress::ProgressRecorder;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use switchboard_core::ChatAddress;
use switchboard_store::{NewRun, RunKind};

/// `max_execution_tree_iterations`: one counter per foreground root turn.
/// A child may reserve a slot only while more than one remains, so the root
/// always keeps its last slot for a tool-free completion.
#[derive(Debug)]
pub struct TreeBudget {
    limit: u32,
    remaining: AtomicU32,
}

impl TreeBudget {
    /// A budget of `limit` iterations.
    pub fn new(limit: u32) -> Self {
        Self {
            limit,
            remaining: AtomicU32::new(limit),
        }
    }

    /// The budget.
    pub fn limit(&self) -> u32 {
        self.limit
    }

    /// What is left.
    pub fn remaining(&self) -> u32 {
        self.remaining.load(Ordering::SeqCst)
    }

    /// A child's reservation: succeeds only while more than one slot remains.
    pub fn reserve_for_child(&self) -> bool {
        self.remaining
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |r| (r > 1).then(|| r - 1))
            .is_ok()
    }

    /// The root's reservation. `Some(true)` = a tool iteration,
    /// `Some(false)` = the last slot, to be spent without tools,
    /// `None` = nothing left.
    pub fn reserve_for_root(&self) -> Option<bool> {
        let before = self
            .remaining
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |r| r.checked_sub(1))
            .ok()?;
        Some(before > 1)
    }
}

/// Per-run position in the tree.
#[derive(Clone, Default)]
pub struct RunScope {
    /// This run's row in the run registry (children only).
    pub run_id: Option<String>,
    /// The root run of the tree, when it is a registry run.
    pub root_id: Option<String>,
    /// Delegation depth: 0 for a turn started by a person or cron.
    pub depth: u32,
    /// `max_delegation_depth`, tightened (min) at every hop.
    pub max_depth: u32,
    /// Aliases of the callers, root first, ending with this run's agent.
    pub owner_chain: Vec<String>,
    /// A same-identity `spawn_subagent` child (may not spawn again).
    pub is_subagent: bool,
    /// `sessions_spawn` depth: 0 for the main session, 1 for its children...
    pub spawn_depth: u32,
    /// The root agent's `max_spawn_depth`, inherited by the whole tree.
    pub max_spawn_depth: u32,
    /// A bounded child's `delegate` instance: delegation only, no task management.
    pub delegate_only: bool,
    /// The foreground tree's iteration budget, if the root configured one.
    pub tree: Option<Arc<TreeBudget>>,
    /// This run owns the tree budget.
    pub is_tree_root: bool,
    /// Agents whose daily caps this run's spend counts against: its own
    /// alias, then its bounded ancestors.
    pub cost_chain: Vec<String>,
    /// The chat and thread where the work was asked for.
    pub origin: Option<ChatAddress>,
    /// The person whose message started the tree.
    pub requester: Option<String>,
    /// When this run must end (its own timeout); approvals never wait longer.
    pub deadline: Option<tokio::time::Instant>,
    /// The session was created for this run: there is no history to load.
    pub fresh_session: bool,
    /// Progress reporting for registry-tracked runs.
    pub progress: Option<Arc<ProgressRecorder>>,
}

/// How long a child's task may be in its registry row.
pub(crate) const TASK_IN_ROW: usize = 500;

/// What differs between the registry rows of children (see
/// [`RunScope::child_row`]).
pub struct ChildRow<'a> {
    /// The child's run id.
    pub id: &'a str,
    /// What kind of child.
    pub kind: RunKind,
    /// The agent it runs as.
    pub agent: &'a str,
    /// Its session.
    pub session_key: &'a str,
    /// The caller chain the child carries (often the caller's own).
    pub owner_chain: Vec<String>,
    /// Its depth.
    pub depth: i64,
    /// Its task.
    pub task: &'a str,
    /// Its model.
    pub model: &'a str,
    /// The session that asked for it.
    pub requester_session: &'a str,
}

impl RunScope {
    /// The scope of a child this run starts as `agent`, carrying
    /// `owner_chain`: under the same root, from the same chat and person,
    /// in a session of its own, spending as `agent`, at this run's depths
    /// (each kind of child then counts its own hop).
    pub(crate) fn for_child(&self, owner_chain: Vec<String>, agent: &str) -> RunScope {
        RunScope {
            root_id: self.root_id.clone().or_else(|| self.run_id.clone()),
            depth: self.depth,
            max_depth: self.max_depth,
            owner_chain,
            spawn_depth: self.spawn_depth,
            max_spawn_depth: self.max_spawn_depth,
            cost_chain: vec![agent.to_string()],
            origin: self.origin.clone(),
            requester: self.requester.clone(),
            fresh_session: true,
            ..RunScope::default()
        }
    }

    /// The registry row of a child this run starts: it hangs under this
    /// run (and its root), comes from the same chat and person, and its
    /// task is cut to what a row keeps. One constructor for every kind of
    /// child, so none restates how a root or an origin is found.
    pub fn child_row(&self, c: ChildRow<'_>) -> NewRun {
        NewRun {
            id: c.id.to_string(),
            kind: c.kind,
            parent_id: self.run_id.clone(),
            root_id: self
                .root_id
                .clone()
                .or_else(|| self.run_id.clone())
                .unwrap_or_else(|| c.id.to_string()),
            owner_chain: c.owner_chain,
            depth: c.depth,
            agent: c.agent.to_string(),
            session_key: c.session_key.to_string(),
            origin_channel: self.origin.as_ref().map(|o| o.channel.clone()),
            origin_chat: self.origin.as_ref().map(|o| o.chat.clone()),
            origin_thread: self.origin.as_ref().and_then(|o| o.thread.clone()),
            label: None,
            task: Some(c.task.chars().take(TASK_IN_ROW).collect()),
            model: Some(c.model.to_string()),
            requester: self.requester.clone(),
            requester_session: Some(c.requester_session.to_string()),
            announce: false,
        }
    }

    /// A child run anywhere below a person's turn.
    pub fn is_child(&self) -> bool {
        self.depth > 0 || self.is_subagent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn children_never_take_the_roots_last_slot() {
        let t = TreeBudget::new(3);
        assert!(t.reserve_for_child());
        assert!(t.reserve_for_child());
        assert!(!t.reserve_for_child());
        assert_eq!(t.reserve_for_root(), Some(false));
        assert_eq!(t.reserve_for_root(), None);
    }

    #[test]
    fn concurrent_reservations_never_overshoot() {
        let t = Arc::new(TreeBudget::new(50));
        let granted = Arc::new(AtomicU32::new(0));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (t, g) = (t.clone(), granted.clone());
                std::thread::spawn(move || {
                    for _ in 0..100 {
                        if t.reserve_for_child() {
                            g.fetch_add(1, Ordering::SeqCst);
                        }
                    }
                })
            })
            .collect();
        for th in threads {
            th.join().unwrap();
        }
        assert_eq!(granted.load(Ordering::SeqCst), 49);
        assert_eq!(t.remaining(), 1);
    }
}
