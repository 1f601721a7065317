//! The live registry: what changes while the gateway runs, beside what
//! `Core` fixes at start (configuration, providers, policies, tools). The
//! children running in this process (their cancel handles), messages
//! waiting for running loops, the pause switch, the global `subagent` lane,
//! one spawn at a time per session, and the approval broker the gateway
//! installs once its channels run.

use crate::approval::ApprovalBroker;
use parking_lot::{Mutex, RwLock};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio_util::sync::CancellationToken;

/// See the module doc.
pub struct Live {
    /// Cancellation handles of running child runs (foreground and
    /// background), by run id.
    tasks: Arc<Mutex<HashMap<String, CancellationToken>>>,
    /// Delivers approval prompts along a risk profile's `approval_route`.
    route_broker: RwLock<Option<Arc<dyn ApprovalBroker>>>,
    /// Posts files into chats (`send_file`).
    file_poster: RwLock<Option<Arc<dyn crate::files::FilePoster>>>,
    /// Whether work is still this gateway's (several gateways on one database).
    fence: RwLock<Option<Arc<dyn crate::fence::Fence>>>,
    /// `/subagents pause all`: new spawns and delegations are refused everywhere.
    paused_all: AtomicBool,
    /// `/subagents pause`: refused in the trees of these agents.
    paused: RwLock<std::collections::BTreeSet<String>>,
    /// The global `subagent` lane: at most `max_concurrent` session children
    /// run at once; the rest wait for a permit.
    pub(crate) lane: Arc<tokio::sync::Semaphore>,
    /// Notes (announcements, steering messages) waiting for a running loop, by session key.
    notes: Mutex<HashMap<String, Vec<String>>>,
    /// One spawn at a time per session, from counting its active children
    /// to recording the new one, so parallel calls cannot overshoot
    /// `max_children_per_agent`.
    spawning: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// What operators were told, by agent and subject: each once per process.
    told: Mutex<std::collections::HashSet<(String, String)>>,
}

/// Held while a session's spawn is checked and recorded.
pub struct SpawnTurn {
    _guard: tokio::sync::OwnedMutexGuard<()>,
}

/// Removes a run's cancel handle from the registry when dropped.
pub struct RunRegistration {
    tasks: Arc<Mutex<HashMap<String, CancellationToken>>>,
    run_id: String,
}

impl Drop for RunRegistration {
    fn drop(&mut self) {
        self.tasks.lock().remove(&self.run_id);
    }
}

impl Live {
    pub(crate) fn new(lane_permits: usize) -> Self {
        Self {
            tasks: Arc::default(),
            route_broker: RwLock::new(None),
            file_poster: RwLock::new(None),
            fence: RwLock::new(None),
            paused_all: AtomicBool::new(false),
            paused: RwLock::default(),
            lane: Arc::new(tokio::sync::Semaphore::new(lane_permits)),
            notes: Mutex::default(),
            spawning: Mutex::default(),
            told: Mutex::default(),
        }
    }

    /// Register a running child's cancel handle until the guard drops.
    pub fn register_run(&self, run_id: &str, cancel: &CancellationToken) -> RunRegistration {
        self.tasks.lock().insert(run_id.to_string(), cancel.clone());
        RunRegistration {
            tasks: self.tasks.clone(),
            run_id: run_id.to_string(),
        }
    }

    /// Cancel every child running here; how many.
    pub fn cancel_all_runs(&self) -> usize {
        let tokens: Vec<CancellationToken> = self.tasks.lock().values().cloned().collect();
        for t in &tokens {
            t.cancel();
        }
        tokens.len()
    }

    /// Cancel a running child by id; false when it is not running here.
    pub fn cancel_run(&self, run_id: &str) -> bool {
        let token = self.tasks.lock().get(run_id).cloned();
        token.map(|t| t.cancel()).is_some()
    }

    /// Forget a child's cancel handle, returning it (`cancel_task`).
    pub(crate) fn unregister_run(&self, run_id: &str) -> Option<CancellationToken> {
        self.tasks.lock().remove(run_id)
    }

    /// Leave a note (a steering message, a child's result) for the running
    /// loop of `session_key`, read at its next step. Not to be confused
    /// with the gateway's inbox (the durable table of messages people
    /// sent) or a workspace's `received/` folder (files received).
    pub fn leave_note(&self, session_key: &str, text: String) {
        self.notes.lock().entry(session_key.to_string()).or_default().push(text);
    }

    /// Whether operators are yet to be told about `subject` for `agent`
    /// (true once: the first asker tells them).
    pub fn first_telling(&self, agent: &str, subject: &str) -> bool {
        self.told.lock().insert((agent.to_string(), subject.to_string()))
    }

    /// Notes waiting for `session_key`'s loop.
    pub fn take_notes(&self, session_key: &str) -> Vec<String> {
        self.notes.lock().remove(session_key).unwrap_or_default()
    }

    /// Whether new spawns and delegations are refused in `agent`'s runs.
    pub fn is_paused(&self, agent: &str) -> bool {
        self.paused_all.load(Ordering::SeqCst) || self.paused.read().contains(agent)
    }

    /// Whether spawning is paused for every agent.
    pub fn is_paused_everywhere(&self) -> bool {
        self.paused_all.load(Ordering::SeqCst)
    }

    /// The agents paused one by one.
    pub fn paused_agents(&self) -> Vec<String> {
        self.paused.read().iter().cloned().collect()
    }

    /// Refuse (or allow again) new spawns and delegations in `agent`'s
    /// runs, or everywhere with `None`; running children continue either way.
    pub fn set_paused(&self, agent: Option<&str>, paused: bool) {
        match (agent, paused) {
            (None, p) => self.paused_all.store(p, Ordering::SeqCst),
            (Some(a), true) => {
                self.paused.write().insert(a.to_string());
            }
            (Some(a), false) => {
                self.paused.write().remove(a);
            }
        }
    }

    /// Wait for this session's turn to spawn a child (see `spawning`).
    pub async fn spawn_turn(&self, session_key: &str) -> SpawnTurn {
        let lock = {
            let mut map = self.spawning.lock();
            // Forget sessions nobody is spawning in.
            map.retain(|_, l| Arc::strong_count(l) > 1);
            map.entry(session_key.to_string()).or_default().clone()
        };
        SpawnTurn {
            _guard: lock.lock_owned().await,
        }
    }

    /// Install the broker that routes approvals to approver channels.
    pub fn install_route_broker(&self, broker: Arc<dyn ApprovalBroker>) {
        *self.route_broker.write() = Some(broker);
    }

    /// Install what tells whether work is still this gateway's (`fence`).
    pub fn install_fence(&self, fence: Arc<dyn crate::fence::Fence>) {
        *self.fence.write() = Some(fence);
    }

    /// The installed fence, if any.
    pub(crate) fn fence(&self) -> Option<Arc<dyn crate::fence::Fence>> {
        self.fence.read().clone()
    }

    /// Install what posts files into chats (`send_file`).
    pub fn install_file_poster(&self, poster: Arc<dyn crate::files::FilePoster>) {
        *self.file_poster.write() = Some(poster);
    }

    /// The installed file poster, if any.
    pub(crate) fn file_poster(&self) -> Option<Arc<dyn crate::files::FilePoster>> {
        self.file_poster.read().clone()
    }

    /// The installed route broker, if any.
    pub(crate) fn route_broker(&self) -> Option<Arc<dyn ApprovalBroker>> {
        self.route_broker.read().clone()
    }
}
