//! Long polling: one `getUpdates` after another from the offset kept in the
//! control plane. An empty poll (Telegram held it for `timeout` and nothing
//! came) is a success; only real failures (refused connections, 5xx,
//! unreadable answers) back off, from 0.5 s to at most 5 s, so a server
//! that comes back is polled again within seconds. An outage is logged once
//! when it starts and once when polling recovers, not at every try.
//!
//! The poll is made with our own HTTP client rather than teloxide's: its
//! client must wait longer than the long poll, and teloxide sleeps 10 s
//! inside every request answered with a 5xx, which would hold the poller
//! past the end of an outage.

use crate::inbound;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use std::sync::Arc;
use std::time::Duration;
use switchboard_core::{CursorStore, Inbound, TaskEnd, guarded};
use teloxide::types::{Update, UpdateKind};
use tokio::sync::mpsc;

const FIRST_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// Long polling for one instance.
#[derive(Clone)]
pub(crate) struct Poller {
    /// `getUpdates` of this bot (`<api>/bot<token>/getUpdates`); never logged.
    pub url: Arc<reqwest::Url>,
    /// A client whose timeout outlasts `timeout`.
    pub http: reqwest::Client,
    pub name: String,
    pub cursors: Arc<dyn CursorStore>,
    pub username: String,
    /// How long Telegram may hold one poll.
    pub timeout: Duration,
}

impl Poller {
    pub(crate) async fn run(self, inbound: mpsc::Sender<Inbound>) -> TaskEnd {
        let mut offset: i32 = match self.cursors.load(&self.name).await {
            Some(c) => c.parse().unwrap_or(0),
            None => 0,
        };
        let timeout = self.timeout.as_secs();
        let mut backoff = FIRST_BACKOFF;
        let mut failing_since: Option<std::time::Instant> = None;
        loop {
            let updates = match self.get_updates(offset, timeout).await {
                Ok(u) => {
                    if let Some(since) = failing_since.take() {
                        tracing::info!(channel = %self.name, down_for = ?since.elapsed(), "polling recovered");
                    }
                    backoff = FIRST_BACKOFF;
                    u
                }
                Err(PollError::RetryAfter(secs)) => {
                    tokio::time::sleep(Duration::from_secs(secs)).await;
                    continue;
                }
                Err(PollError::Failed(e)) => {
                    if failing_since.is_none() {
                        failing_since = Some(std::time::Instant::now());
                        tracing::warn!(channel = %self.name, error = %e, "getUpdates failed; retrying until it answers");
                    } else {
                        tracing::debug!(channel = %self.name, error = %e, ?backoff, "getUpdates still failing");
                    }
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    continue;
                }
            };
            for update in updates {
                offset = offset.max(update.id.0 as i32 + 1);
                // An update that cannot be converted is logged and skipped:
                // the offset moves past it, so it is never retried.
                let what = format!("update {}", update.id.0);
                if let Some(message) = guarded(&self.name, &what, || inbound::convert(&self, &update))
                    && inbound.send(message).await.is_err()
                {
                    return TaskEnd::Stopped;
                }
                // Saved once handed over: a restart resumes after it.
                self.cursors.save(&self.name, &offset.to_string()).await;
            }
        }
    }
}

/// The Bot API's envelope around every answer.
#[derive(Deserialize)]
struct Answer {
    ok: bool,
    #[serde(default)]
    result: Option<Vec<Box<RawValue>>>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    parameters: Option<Value>,
}

enum PollError {
    /// Telegram asked to wait this many seconds.
    RetryAfter(u64),
    /// Anything else; the text has no URL (it would carry the token).
    Failed(String),
}

impl Poller {
    /// One long poll. Updates that cannot be read as teloxide's `Update`
    /// are logged and skipped.
    async fn get_updates(&self, offset: i32, timeout: u64) -> Result<Vec<Update>, PollError> {
        let body = serde_json::json!({ "offset": offset, "timeout": timeout });
        let response = self
            .http
            .post((*self.url).clone())
            .json(&body)
            .send()
            .await
            .map_err(|e| PollError::Failed(format!("the Bot API could not be reached: {}", e.without_url())))?;
        let status = response.status();
        let text = response
            .text()
            .await
            .map_err(|e| PollError::Failed(format!("the answer was cut off: {}", e.without_url())))?;
        let answer: Answer = serde_json::from_str(&text)
            .map_err(|_| PollError::Failed(format!("HTTP {status} with an answer that is not the Bot API's JSON")))?;
        if !answer.ok {
            if let Some(secs) = answer.parameters.as_ref().and_then(|p| p["retry_after"].as_u64()) {
                return Err(PollError::RetryAfter(secs.max(1)));
            }
            let description = answer.description.as_deref().unwrap_or("no description");
            return Err(PollError::Failed(format!("HTTP {status}: {description}")));
        }
        let raw = answer.result.unwrap_or_default();
        let mut updates = Vec::with_capacity(raw.len());
        for item in raw {
            // Read from the text: teloxide's `Update` relies on the order of
            // its fields, which a JSON value (sorted keys) does not keep.
            match serde_json::from_str::<Update>(item.get()) {
                Ok(u) if !matches!(u.kind, UpdateKind::Error(_)) => updates.push(u),
                Ok(u) => {
                    tracing::error!(channel = %self.name, update = u.id.0, "an update of a kind this adapter cannot read; skipped");
                    // Still advance past it.
                    updates.push(u);
                }
                Err(e) => {
                    tracing::error!(channel = %self.name, error = %e, "an update could not be read; skipped");
                }
            }
        }
        Ok(updates)
    }
}
