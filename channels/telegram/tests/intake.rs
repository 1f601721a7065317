//! The poller and the gateway's intake: the offset moves only with
//! messages that were taken. When the intake refuses (its store is down),
//! the same updates are fetched again and handed over once it takes them;
//! nothing is skipped and nothing is handed over twice.

use async_trait::async_trait;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use switchboard_channel_telegram::TelegramChannel;
use switchboard_core::{Channel, Inbound, Intake, IntakeError};
use switchboard_test_support::telegram::{FakeTelegram, private_chat, user};

/// An intake whose store fails the first `failures` takes.
#[derive(Default)]
struct FlakyIntake {
    failures: Mutex<u32>,
    taken: Mutex<Vec<String>>,
    cursor: Mutex<Option<String>>,
    /// Cursors offered by refused takes.
    refused: Mutex<Vec<Option<String>>>,
}

#[async_trait]
impl Intake for FlakyIntake {
    async fn cursor(&self, _: &str) -> Result<Option<String>, IntakeError> {
        Ok(self.cursor.lock().unwrap().clone())
    }

    async fn take(&self, _: &str, messages: Vec<Inbound>, cursor: Option<String>) -> Result<(), IntakeError> {
        let mut failures = self.failures.lock().unwrap();
        if *failures > 0 {
            *failures -= 1;
            self.refused.lock().unwrap().push(cursor);
            return Err(IntakeError("the store is down".into()));
        }
        self.taken.lock().unwrap().extend(messages.into_iter().map(|m| m.text));
        *self.cursor.lock().unwrap() = cursor;
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn updates_refused_by_the_intake_come_again_and_are_taken_once() {
    let tg = FakeTelegram::start().await;
    let intake = Arc::new(FlakyIntake::default());
    *intake.failures.lock().unwrap() = 2;
    tg.message(private_chat(11, "Ann"), user(11, "Ann"), "first", None, None);
    tg.message(private_chat(11, "Ann"), user(11, "Ann"), "second", None, None);
    let channel = TelegramChannel::new("telegram.main", "1:T", &tg.url(), None, Duration::from_secs(1)).unwrap();
    channel.start(intake.clone()).await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while intake.taken.lock().unwrap().len() < 2 {
        assert!(tokio::time::Instant::now() < deadline, "never taken");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tg.message(private_chat(11, "Ann"), user(11, "Ann"), "third", None, None);
    while intake.taken.lock().unwrap().len() < 3 {
        assert!(tokio::time::Instant::now() < deadline, "the third was never taken");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(*intake.taken.lock().unwrap(), ["first", "second", "third"]);
    assert_eq!(
        *intake.refused.lock().unwrap(),
        [Some("3".to_string()), Some("3".to_string())],
        "the same batch was offered again after each refusal"
    );
    assert_eq!(intake.cursor.lock().unwrap().as_deref(), Some("4"));
}

/// An intake that records the size of each batch it takes.
#[derive(Default)]
struct CountingIntake {
    batches: Mutex<Vec<usize>>,
    taken: Mutex<Vec<String>>,
}

#[async_trait]
impl Intake for CountingIntake {
    async fn cursor(&self, _: &str) -> Result<Option<String>, IntakeError> {
        Ok(None)
    }

    async fn take(&self, _: &str, messages: Vec<Inbound>, _: Option<String>) -> Result<(), IntakeError> {
        self.batches.lock().unwrap().push(messages.len());
        self.taken.lock().unwrap().extend(messages.into_iter().map(|m| m.text));
        Ok(())
    }
}

/// Telegram hands out at most 100 updates per `getUpdates` (its `limit`
/// defaults to 100): a backlog of 250 comes in pages, each taken before the
/// next is asked for, all of them once and in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backlog_is_taken_a_hundred_updates_at_a_time_in_order() {
    let tg = FakeTelegram::start().await;
    let sent: Vec<String> = (0..250).map(|i| format!("m{i}")).collect();
    for (i, text) in sent.iter().enumerate() {
        let id = 100 + i as i64;
        tg.message(private_chat(id, "P"), user(id, "P"), text, None, None);
    }
    let intake = Arc::new(CountingIntake::default());
    let channel = TelegramChannel::new("telegram.main", "1:T", &tg.url(), None, Duration::from_secs(1)).unwrap();
    channel.start(intake.clone()).await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while intake.taken.lock().unwrap().len() < sent.len() {
        assert!(tokio::time::Instant::now() < deadline, "the backlog was never taken");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(*intake.taken.lock().unwrap(), sent);
    let batches = intake.batches.lock().unwrap().clone();
    assert!(
        batches.iter().all(|&n| n <= 100),
        "a page larger than Telegram's: {batches:?}"
    );
    assert_eq!(batches.len(), 3, "250 updates in pages of 100: {batches:?}");
}
