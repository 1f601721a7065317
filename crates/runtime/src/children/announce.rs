//! Announcements (docs/delegation.md) of finished child runs, written to the
//! durable outbox for the gateway to deliver into the chat and thread where
//! the work was asked for. Status comes from the run row (runtime signals),
//! never from model text. [`queue`] is the only place an announcement is
//! written; nested session children reach it through `relay`.

use switchboard_store::{RunRow, RunStatus, Store, StoreError};

/// `1.8k`, `950`.
fn tokens(n: i64) -> String {
    if n >= 1000 {
        format!("{:.1}k", n as f64 / 1000.0)
    } else {
        n.to_string()
    }
}

/// `5m12s`, `3s`, `1h02m`.
fn runtime(ms: i64) -> String {
    let s = (ms / 1000).max(0);
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// The announcement text of a finished run.
pub fn render(row: &RunRow) -> String {
    render_with(row, None)
}

/// The announcement text, with `result` (an announce step's answer) in
/// place of the run's output when given.
pub fn render_with(row: &RunRow, result: Option<&str>) -> String {
    let status = match row.status {
        RunStatus::Completed => "success",
        RunStatus::Failed | RunStatus::Cancelled => "error",
        RunStatus::TimedOut => "timeout",
        RunStatus::Running | RunStatus::Lost => "unknown",
    };
    let result = result
        .or(row.output.as_deref())
        .filter(|o| !o.trim().is_empty())
        .unwrap_or("(not available)");
    let mut notes = Vec::new();
    if let Some(e) = &row.error {
        notes.push(e.clone());
    }
    if row.status == RunStatus::Lost || row.status == RunStatus::Cancelled {
        notes.push(format!("run {}", row.status));
    }
    notes.push(format!("agent {} via {}", row.agent, row.kind));
    let ended = row.ended_at.unwrap_or(row.created_at);
    let started = row.started_at.unwrap_or(row.created_at);
    format!(
        "Status: {status}\nResult: {result}\nNotes: {notes}\nruntime {rt} • tokens {i} in / {o} out / {t} total • est ${cost:.2}\nsessionKey {key} • sessionId {id} • transcript db:{key}",
        notes = notes.join("; "),
        rt = runtime(ended - started),
        i = tokens(row.tokens_in),
        o = tokens(row.tokens_out),
        t = tokens(row.tokens_in + row.tokens_out),
        cost = row.cost_micros as f64 / 1e6,
        key = row.session_key,
        id = row.id,
    )
}

/// Queue the announcement of run `run_id` into the chat it came from.
/// Returns false when the run has no originating chat or was queued before.
pub async fn announce_run(store: &Store, run_id: &str) -> Result<bool, StoreError> {
    match store.runs().get(run_id).await? {
        Some(row) => announce_row(store, &row).await,
        None => Ok(false),
    }
}

/// Queue the announcement of a finished run whose row is at hand.
pub async fn announce_row(store: &Store, row: &RunRow) -> Result<bool, StoreError> {
    queue(store, &row.id, row, &render(row)).await
}

/// Queue `body`, the announcement of `row`, under the idempotency key
/// `key`, into the chat and thread the work came from. Returns false when
/// the run has no originating chat (recorded as needing none) or the
/// announcement was queued before.
pub(crate) async fn queue(store: &Store, key: &str, row: &RunRow, body: &str) -> Result<bool, StoreError> {
    let (Some(channel), Some(chat)) = (&row.origin_channel, &row.origin_chat) else {
        tracing::info!(run_id = %row.id, "finished run has no originating chat; nothing to announce");
        store.runs().announcement_not_needed(&row.id).await?;
        return Ok(false);
    };
    store
        .outbox()
        .enqueue(key, channel, chat, row.origin_thread.as_deref(), body)
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(runtime(312_000), "5m12s");
        assert_eq!(runtime(3_000), "3s");
        assert_eq!(runtime(3_720_000), "1h02m");
        assert_eq!(tokens(1834), "1.8k");
        assert_eq!(tokens(512), "512");
    }
}
