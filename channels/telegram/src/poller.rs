//! Long polling: one `getUpdates` after another from the offset kept in the
//! control plane. An empty poll (Telegram held it for `timeout` and nothing
//! came) is a success; only real failures (refused connections, 5xx,
//! unreadable answers) back off, from 0.5 s to at most 5 s, so a server
//! that comes back is polled again within seconds. An outage is logged once
//! when it starts and once when polling recovers, not at every try.
//!
//! Each batch of updates is handed to the gateway's intake together with
//! the offset after it (one transaction on the gateway's side); when the
//! intake cannot take them, the offset stays and the same updates are
//! fetched again after a pause (0.5 s, growing to 2 s), so a message is
//! never skipped.
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
use switchboard_core::{Intake, TaskEnd, guarded};
use teloxide::types::{Update, UpdateKind};

const FIRST_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// The longest pause before updates the intake could not store are
/// fetched again.
const MAX_TAKE_BACKOFF: Duration = Duration::from_secs(2);

/// Long polling for one instance.
#[derive(Clone)]
pub(crate) struct Poller {
    /// `getUpdates` of this bot (`<api>/bot<token>/getUpdates`); never logged.
    pub url: Arc<reqwest::Url>,
    /// A client whose timeout outlasts `timeout`.
    pub http: reqwest::Client,
    pub name: String,
    pub username: String,
    /// How long Telegram may hold one poll.
    pub timeout: Duration,
}

impl Poller {
    /// The bot as an update's conversion sees it.
    pub(crate) fn bot(&self) -> inbound::Bot<'_> {
        inbound::Bot {
            name: &self.name,
            username: &self.username,
        }
    }

    pub(crate) async fn run(self, intake: Arc<dyn Intake>) -> TaskEnd {
        let mut backoff = FIRST_BACKOFF;
        let mut offset: i32 = loop {
            match intake.cursor(&self.name).await {
                Ok(c) => break c.and_then(|c| c.parse().ok()).unwrap_or(0),
                Err(e) => {
                    tracing::warn!(channel = %self.name, error = %e, "cannot read where polling resumes; retrying");
                    pause(&mut backoff).await;
                }
            }
        };
        let timeout = self.timeout.as_secs();
        backoff = FIRST_BACKOFF;
        let mut failing_since: Option<std::time::Instant> = None;
        let mut take_backoff = FIRST_BACKOFF;
        loop {
            let updates = match self.get_updates(offset, timeout).await {
                Ok(u) => {
                    intake.connection(&self.name, Ok(()));
                    u
                }
                Err(PollError::RetryAfter(secs)) => {
                    tokio::time::sleep(Duration::from_secs(secs)).await;
                    continue;
                }
                Err(PollError::Failed(e)) => {
                    intake.connection(&self.name, Err(format!("getUpdates failed: {e}")));
                    self.failed(&mut failing_since, &e, backoff, true);
                    pause(&mut backoff).await;
                    continue;
                }
            };
            let mut next = offset;
            let mut messages = Vec::with_capacity(updates.len());
            for update in updates {
                next = next.max(update.id.0 as i32 + 1);
                // An update that cannot be converted is logged and skipped:
                // the offset moves past it, so it is never retried.
                let what = format!("update {}", update.id.0);
                if let Some(message) = guarded(&self.name, &what, || inbound::convert(&self.bot(), &update)) {
                    messages.push(message);
                }
            }
            if next != offset
                && let Err(e) = intake.take(&self.name, messages, Some(next.to_string())).await
            {
                // Not taken: the offset stays, the same updates come again,
                // after at most `MAX_TAKE_BACKOFF` (a failed take has often
                // waited for the database already; the sooner it is tried,
                // the sooner messages flow once it is back).
                self.failed(&mut failing_since, &e.to_string(), take_backoff, false);
                tokio::time::sleep(take_backoff).await;
                take_backoff = (take_backoff * 2).min(MAX_TAKE_BACKOFF);
                continue;
            }
            offset = next;
            take_backoff = FIRST_BACKOFF;
            if let Some(since) = failing_since.take() {
                tracing::info!(channel = %self.name, down_for = ?since.elapsed(), "polling recovered");
            }
            backoff = FIRST_BACKOFF;
        }
    }

    /// Log a failure (of the poll, or of the intake taking its updates)
    /// once when an outage starts, quietly while it lasts.
    fn failed(&self, since: &mut Option<std::time::Instant>, error: &str, backoff: Duration, poll: bool) {
        if since.is_none() {
            *since = Some(std::time::Instant::now());
            if poll {
                tracing::warn!(channel = %self.name, %error, "getUpdates failed; retrying until it answers");
            } else {
                tracing::warn!(channel = %self.name, %error, "updates not taken; fetching them again until they are");
            }
        } else {
            tracing::debug!(channel = %self.name, %error, ?backoff, "polling still failing");
        }
    }
}

/// Wait `backoff`, then double it (up to `MAX_BACKOFF`) for the next failure.
async fn pause(backoff: &mut Duration) {
    tokio::time::sleep(*backoff).await;
    *backoff = (*backoff * 2).min(MAX_BACKOFF);
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
