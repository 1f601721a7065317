//! The progress object of a registry-tracked run (docs/delegation.md): counters and
//! tool names only — never arguments, results, errors or prompts.

use parking_lot::Mutex;
use serde::Serialize;
use std::collections::VecDeque;
use switchboard_store::{Store, now_ms};

const MAX_TOOL_NAME: usize = 64;
const TAIL: usize = 5;

/// One tool call, for the progress object.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ToolMark {
    /// The tool.
    pub name: String,
    /// When it started (Unix ms).
    pub started_at: i64,
    /// When it ended.
    pub finished_at: Option<i64>,
    /// Whether it succeeded.
    pub success: Option<bool>,
}

/// What a run has done so far.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Progress {
    /// Its last model call or tool event (Unix ms).
    pub last_activity_at: i64,
    /// Model calls.
    pub iterations: u32,
    /// Prompt tokens spent so far.
    pub tokens_in: u64,
    /// Answer tokens spent so far.
    pub tokens_out: u64,
    /// Tool calls that ended.
    pub tools_completed: u32,
    /// The latest tool call.
    pub last_tool: Option<ToolMark>,
    /// How long it may run.
    pub timeout_budget_secs: u64,
    /// The last few tool calls.
    pub recent_tools: VecDeque<ToolMark>,
    /// One line per recent tool call.
    pub receipt_tail: VecDeque<String>,
}

/// Progress is written at most this often per run (the last state is
/// written with the run's ending), so busy runs do not flood the store.
const MIN_WRITE_INTERVAL_MS: i64 = 1000;

/// Collects progress for one run and writes it to the run's row.
pub struct ProgressRecorder {
    run_id: String,
    store: Store,
    state: Mutex<Progress>,
    /// When progress was last written (0 = never), and whether newer state waits.
    written: Mutex<(i64, bool)>,
}

fn cut(name: &str) -> String {
    name.chars().take(MAX_TOOL_NAME).collect()
}

/// A short receipt token for a finished call: FNV-1a over the run id, the
/// call's sequence number, the tool and its outcome.
fn receipt(run_id: &str, seq: u32, tool: &str, success: bool) -> String {
    switchboard_core::fnv1a_hex(format!("{run_id}|{seq}|{tool}|{success}").as_bytes())
}

impl ProgressRecorder {
    /// A recorder for run `run_id`.
    pub fn new(run_id: &str, store: Store, timeout_budget_secs: u64) -> Self {
        Self {
            run_id: run_id.to_string(),
            store,
            state: Mutex::new(Progress {
                last_activity_at: now_ms(),
                timeout_budget_secs,
                ..Progress::default()
            }),
            // The first write waits a full interval too: short runs end
            // before it, and their final progress is flushed once.
            written: Mutex::new((now_ms(), false)),
        }
    }

    fn update(&self, f: impl FnOnce(&mut Progress)) -> String {
        let mut p = self.state.lock();
        f(&mut p);
        p.last_activity_at = now_ms();
        serde_json::to_string(&*p).unwrap_or_default()
    }

    async fn save(&self, json: String) {
        {
            let mut w = self.written.lock();
            let now = now_ms();
            if now - w.0 < MIN_WRITE_INTERVAL_MS {
                w.1 = true;
                return;
            }
            *w = (now, false);
        }
        self.write(json).await;
    }

    async fn write(&self, json: String) {
        if let Err(e) = self.store.runs().set_progress(&self.run_id, &json).await {
            tracing::warn!(run_id = %self.run_id, error = %e, "progress write failed");
        }
    }

    /// A model call was made, reading and writing these many tokens.
    pub async fn model_call(&self, tokens_in: u64, tokens_out: u64) {
        let json = self.update(|p| {
            p.iterations += 1;
            p.tokens_in += tokens_in;
            p.tokens_out += tokens_out;
        });
        self.save(json).await;
    }

    /// `tool` started.
    pub async fn tool_started(&self, tool: &str) {
        let json = self.update(|p| {
            p.last_tool = Some(ToolMark {
                name: cut(tool),
                started_at: now_ms(),
                finished_at: None,
                success: None,
            });
        });
        self.save(json).await;
    }

    /// `tool` ended.
    pub async fn tool_finished(&self, tool: &str, success: bool) {
        let run_id = self.run_id.clone();
        let json = self.update(|p| {
            p.tools_completed += 1;
            let now = now_ms();
            let mark = match p.last_tool.take() {
                Some(m) if m.name == cut(tool) && m.finished_at.is_none() => ToolMark {
                    finished_at: Some(now),
                    success: Some(success),
                    ..m
                },
                _ => ToolMark {
                    name: cut(tool),
                    started_at: now,
                    finished_at: Some(now),
                    success: Some(success),
                },
            };
            p.last_tool = Some(mark.clone());
            p.recent_tools.push_back(mark);
            while p.recent_tools.len() > TAIL {
                p.recent_tools.pop_front();
            }
            let token = receipt(&run_id, p.tools_completed, tool, success);
            p.receipt_tail.push_back(format!("{}: {token}", cut(tool)));
            while p.receipt_tail.len() > TAIL {
                p.receipt_tail.pop_front();
            }
        });
        self.save(json).await;
    }

    /// The final progress as JSON, for writing with the run's ending;
    /// no separate write is then needed.
    pub fn finish(&self) -> String {
        self.written.lock().1 = false;
        serde_json::to_string(&self.snapshot()).unwrap_or_default()
    }

    /// Write the progress now, whatever the interval (at a run's end, also
    /// after a kill recorded the ending first).
    pub async fn flush(&self) {
        let json = self.finish();
        self.write(json).await;
    }

    /// The progress now.
    pub fn snapshot(&self) -> Progress {
        self.state.lock().clone()
    }
}
