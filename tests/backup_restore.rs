//! `switchboard backup` under 20 direct messages a second, then the host
//! lost: the gateway is killed right after the copy is taken, the copy is
//! restored into a fresh folder, and a new gateway starts from it against
//! the same Telegram bot, which (as Telegram does) never hands back an
//! update the old gateway confirmed. docs/operations.md, "Backups".
//!
//! What the copy holds unanswered is answered once; what it holds
//! answered is not answered again; what people wrote after the kill comes
//! from the platform and is answered once. Messages the old gateway took
//! and confirmed between the copy and the kill are the backup's window:
//! counted and printed, not asserted (no copy can hold what came after it).

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};
use support::{Gateway, Sandbox, free_port, telegram_dm_config};
use switchboard_test_support::telegram::{FakeTelegram, private_chat, user};
use switchboard_test_support::{ScriptedModel, Step};

/// Person `i`'s chat (and user) id.
fn chat_of(i: usize) -> i64 {
    3000 + i as i64
}

/// Person `i` writes one message, answered "answer i." by the model
/// (twice over: a turn the old gateway had begun when it was killed asks
/// the model again after the restore).
fn dm(model: &ScriptedModel, tg: &FakeTelegram, i: usize) {
    for _ in 0..2 {
        model.push(
            Step::text(format!("answer {i:03}."))
                .when_last_contains(&format!("question {i:03}."))
                .delay(Duration::from_millis(150)),
        );
    }
    tg.message(
        private_chat(chat_of(i), "P"),
        user(chat_of(i), "P"),
        &format!("question {i:03}."),
        None,
        None,
    );
}

/// Answers per chat among `sent`.
fn answers(sent: &[serde_json::Value]) -> BTreeMap<i64, usize> {
    let mut by = BTreeMap::new();
    for m in sent {
        if m["text"].as_str().is_some_and(|t| t.starts_with("answer ")) {
            *by.entry(m["chat"]["id"].as_i64().unwrap()).or_default() += 1;
        }
    }
    by
}

/// The copy's Telegram messages: (chat, answered).
async fn held(copy: &std::path::Path) -> BTreeMap<i64, bool> {
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}?mode=ro", copy.display()))
        .await
        .unwrap();
    let rows: Vec<(String, String)> = sqlx::query_as("SELECT chat, status FROM inbox WHERE channel = 'telegram.main'")
        .fetch_all(&pool)
        .await
        .unwrap();
    pool.close().await;
    rows.into_iter()
        .map(|(chat, status)| (chat.parse().unwrap(), status == "done"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_taken_under_load_restores_into_a_fresh_folder_and_answers_once() {
    let model = ScriptedModel::start().await;
    let tg = FakeTelegram::start().await;
    let port = free_port();
    let config = telegram_dm_config(&model.url(), &tg.url(), port);
    let old = Sandbox::new(&config);
    let mut gw = Gateway::start(&old, port, "probe").await;

    // 20 a second for 3 s, then the copy, taken while they keep coming.
    let mut next = 0;
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(3) {
        dm(&model, &tg, next);
        next += 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let copy = old.path().join("copy.db");
    let (took, before_backup) = (Instant::now(), next);
    let backup = {
        let old_path = old.path().to_path_buf();
        let copy = copy.clone();
        tokio::task::spawn_blocking(move || {
            std::process::Command::new(support::binary())
                .current_dir(&old_path)
                .env("USER", "tester")
                .args(["backup", "--config", "switchboard.toml", copy.to_str().unwrap()])
                .output()
                .unwrap()
        })
    };
    while !backup.is_finished() {
        dm(&model, &tg, next);
        next += 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let out = backup.await.unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && said.contains("integrity check passed"),
        "{said}"
    );
    println!(
        "backup under 20 DMs/s took {:.2} s, {} DMs written meanwhile ({next} in all)",
        took.elapsed().as_secs_f64(),
        next - before_backup
    );
    // The host is lost right after the copy.
    gw.kill();
    let by_old = answers(&tg.sent());
    let in_copy = held(&copy).await;
    let summary = switchboard_store::verify_backup(&copy).await.unwrap();
    assert!(summary.inbox >= in_copy.len() as i64, "{summary:?}");

    // People go on writing; nobody takes their messages for a while.
    let after_kill: Vec<usize> = (next..next + 20).collect();
    for &i in &after_kill {
        dm(&model, &tg, i);
    }

    // A fresh folder, the copy restored into it, a gateway started there.
    let fresh = Sandbox::new(&config);
    let (code, out, err) = fresh.run(&["restore", "--config", "switchboard.toml", copy.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    let sent_before = tg.sent().len();
    let port = free_port();
    let fresh_config = std::fs::read_to_string(fresh.config_path()).unwrap();
    assert!(fresh_config.contains(&tg.url()));
    let _new = Gateway::start(&fresh, port, "probe").await;

    let expected: BTreeSet<i64> = in_copy
        .iter()
        .filter(|(_, done)| !**done)
        .map(|(chat, _)| *chat)
        .chain(after_kill.iter().map(|i| chat_of(*i)))
        .collect();
    let deadline = Instant::now() + Duration::from_secs(60);
    let by_new = loop {
        let by_new = answers(&tg.sent()[sent_before..]);
        if expected.iter().all(|c| by_new.contains_key(c)) || Instant::now() > deadline {
            break by_new;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    tokio::time::sleep(Duration::from_secs(2)).await;
    let by_new_final = answers(&tg.sent()[sent_before..]);
    assert_eq!(by_new, by_new_final, "nothing more after catching up");
    let missing: Vec<_> = expected.iter().filter(|c| !by_new.contains_key(c)).collect();
    assert!(missing.is_empty(), "unanswered after the restore: {missing:?}");
    assert!(
        by_new.values().all(|n| *n == 1),
        "the restored gateway answered something twice: {by_new:?}"
    );
    let again: Vec<_> = in_copy
        .iter()
        .filter(|(chat, done)| **done && by_new.contains_key(chat))
        .collect();
    assert!(again.is_empty(), "answered in the copy, answered again: {again:?}");
    let window: Vec<usize> = (0..next)
        .filter(|i| !in_copy.contains_key(&chat_of(*i)) && !by_old.contains_key(&chat_of(*i)))
        .collect();
    let doubled = by_old.keys().filter(|c| by_new.contains_key(c)).count();
    println!(
        "the copy held {} messages ({} answered); the restored gateway answered {} ({} written after the kill); \
         {} taken after the copy and lost with the host; {} answered by both (sent between the copy and the kill)",
        in_copy.len(),
        in_copy.values().filter(|d| **d).count(),
        by_new.len(),
        after_kill.len(),
        window.len(),
        doubled
    );
}
