//! Waiting for what the bot sent or called, in tests' assertions.

use super::FakeTelegram;
use serde_json::Value;
use std::time::Duration;

impl FakeTelegram {
    /// Wait until the bot has called `method` at least `n` times.
    pub async fn wait_calls(&self, method: &str, n: usize, secs: u64) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
        loop {
            let calls = self.calls(method);
            if calls.len() >= n {
                return calls;
            }
            if tokio::time::Instant::now() > deadline {
                panic!("{method} called {} of {n} times within {secs}s", calls.len());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Wait until the bot has sent at least `n` messages to `chat`; those
    /// messages.
    pub async fn wait_sent_to(&self, chat: i64, n: usize, secs: u64) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
        loop {
            let to: Vec<Value> = self.sent().into_iter().filter(|m| m["chat"]["id"] == chat).collect();
            if to.len() >= n {
                return to;
            }
            if tokio::time::Instant::now() > deadline {
                panic!(
                    "the bot sent {} of {n} messages to {chat} within {secs}s: {:#?}",
                    to.len(),
                    self.sent()
                );
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Wait until the bot has sent at least `n` messages.
    pub async fn wait_sent(&self, n: usize, secs: u64) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
        loop {
            let sent = self.sent();
            if sent.len() >= n {
                return sent;
            }
            if tokio::time::Instant::now() > deadline {
                panic!("the bot sent {} of {n} messages within {secs}s: {sent:#?}", sent.len());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}
