//! `[[cron]]`: scheduled agent turns.

use serde::{Deserialize, Serialize};

/// `[[cron]]`: a prompt run on a schedule.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CronJob {
    /// The job's name (unique, required).
    pub id: String,
    /// Five-field cron expression, UTC.
    pub schedule: String,
    /// Who runs it (required).
    pub agent: String,
    /// The message the agent gets (required).
    pub prompt: String,
    /// `<channel>:<chat>` where the result is posted, e.g. `matrix.main:!ops:example.org`.
    #[serde(default)]
    pub deliver_to: Option<String>,
}

impl CronJob {
    /// `deliver_to` split into (channel, chat). The chat may itself hold colons.
    pub fn delivery(&self) -> Option<(&str, &str)> {
        self.deliver_to.as_deref()?.split_once(':')
    }
}
