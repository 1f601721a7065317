//! Calls to Discord's REST API through serenity's `Http`: error mapping,
//! a fallback retry on 429, and posting into a conversation's thread
//! (created under the person's message on the first answer).

use serde_json::{Value, json};
use serenity::builder::CreateAttachment;
use serenity::http::{Http, HttpError};
use serenity::model::channel::Message;
use serenity::model::id::{ChannelId, MessageId};
use std::future::Future;
use std::time::Duration;
use switchboard_core::ChannelError;

/// Discord's error codes this adapter acts on.
pub(crate) const UNKNOWN_CHANNEL: isize = 10003;
pub(crate) const THREAD_EXISTS: isize = 160_004;

/// How many times a call answered 429 is tried.
const ATTEMPTS: u32 = 5;

/// The HTTP status and Discord error code of a refused call.
pub(crate) fn refusal(e: &serenity::Error) -> Option<(u16, isize)> {
    match e {
        serenity::Error::Http(HttpError::UnsuccessfulRequest(r)) => Some((r.status_code.as_u16(), r.error.code)),
        _ => None,
    }
}

/// What a failed call means for the caller (retry or not).
pub(crate) fn map_err(e: &serenity::Error) -> ChannelError {
    match e {
        serenity::Error::Http(HttpError::UnsuccessfulRequest(r)) => {
            let status = r.status_code.as_u16();
            let what = format!("Discord answered {status} (code {}): {}", r.error.code, r.error.message);
            match status {
                429 => ChannelError::RateLimited(1),
                500..=599 => ChannelError::Transient(what),
                _ => ChannelError::Permanent(what),
            }
        }
        serenity::Error::Http(HttpError::Request(_)) => ChannelError::Transient("Discord could not be reached".into()),
        other => ChannelError::Permanent(other.to_string()),
    }
}

/// Run `call`, again after a pause when Discord answers 429. Serenity's
/// own rate limiter (used in production) waits for `retry_after` before
/// this is ever seen; this covers a 429 that reaches us anyway (and the
/// loopback tests, which run without the limiter).
pub(crate) async fn retrying<T, F, Fut>(mut call: F) -> Result<T, serenity::Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, serenity::Error>>,
{
    let mut pause = Duration::from_millis(500);
    let mut attempt = 1;
    loop {
        match call().await {
            Err(e) if attempt < ATTEMPTS && refusal(&e).is_some_and(|(s, _)| s == 429) => {
                tracing::warn!(attempt, ?pause, "Discord answered 429; waiting before trying again");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(10));
                attempt += 1;
            }
            other => return other,
        }
    }
}

/// Post `body` (with `files` attached) into `channel`.
pub(crate) async fn post(
    http: &Http,
    channel: u64,
    files: &[CreateAttachment],
    body: &Value,
) -> Result<Message, serenity::Error> {
    retrying(|| http.send_message(ChannelId::new(channel), files.to_vec(), body)).await
}

/// Post `body` into the conversation thread `thread` under `parent`:
/// when the thread does not exist yet (the first answer to a message in a
/// channel), start it from that message, named `name`.
pub(crate) async fn post_in_thread(
    http: &Http,
    parent: u64,
    thread: u64,
    name: &str,
    files: &[CreateAttachment],
    body: &Value,
) -> Result<Message, serenity::Error> {
    match post(http, thread, files, body).await {
        Err(e) if refusal(&e).is_some_and(|(_, code)| code == UNKNOWN_CHANNEL) => {
            let start = json!({"name": name, "auto_archive_duration": 1440});
            let made = retrying(|| {
                http.create_thread_from_message(ChannelId::new(parent), MessageId::new(thread), &start, None)
            })
            .await;
            match made {
                Ok(_) => {}
                Err(e) if refusal(&e).is_some_and(|(_, code)| code == THREAD_EXISTS) => {}
                Err(e) => return Err(e),
            }
            post(http, thread, files, body).await
        }
        other => other,
    }
}

/// A thread name from the person's message: its first line, at most 80
/// characters (Discord allows 100).
pub(crate) fn thread_name(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    let name: String = line.chars().take(80).collect();
    if name.is_empty() { "Conversation".into() } else { name }
}

/// Discord's `nonce` for part `part` of delivery `key` (at most 25
/// characters): with `enforce_nonce`, a part posted again after a crash
/// or a failed later part returns the message already posted.
pub(crate) fn nonce(key: &str, part: usize) -> String {
    format!("sb{:016x}", crate::commands::fnv(format!("{key}#{part}").as_bytes()))
}

/// What a message may ping: nobody (model text must never ping
/// @everyone, @here, roles or people).
pub(crate) fn no_pings() -> Value {
    json!({"parse": []})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_nonces() {
        assert_eq!(thread_name("\n  fix the build  \nplease"), "fix the build");
        assert_eq!(thread_name(&"x".repeat(300)).chars().count(), 80);
        assert_eq!(thread_name("   "), "Conversation");
        let n = nonce("reply:abc", 3);
        assert!(n.len() <= 25);
        assert_eq!(n, nonce("reply:abc", 3));
        assert_ne!(n, nonce("reply:abc", 4));
    }
}
