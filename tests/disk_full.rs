//! The SQLite volume full under traffic (docs/operations.md, "A full
//! disk"): the gateway's `data/` is a small tmpfs the test fills while a
//! turn is under way and Telegram DMs arrive, then frees. Nothing is lost
//! or answered twice, the person is told once that the message waits, the
//! log says what to free, and the gateway recovers by itself.

mod support;

use std::io::Write;
use std::time::Duration;
use support::{Gateway, Sandbox, free_port, provider};
use switchboard_test_support::telegram::{FakeTelegram, private_chat, user};
use switchboard_test_support::{ScriptedModel, Step};

/// A tmpfs of `size` mounted on `dir` (as root), unmounted when dropped.
struct Small(std::path::PathBuf);

impl Small {
    fn mount(dir: &std::path::Path, size: &str) -> Option<Self> {
        std::fs::create_dir_all(dir).unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Self(dir.to_path_buf()))
    }
}

impl Drop for Small {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Fill the volume of `dir` with a file; its path.
fn fill(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("filler");
    let mut f = std::fs::File::create(&path).unwrap();
    let block = vec![0u8; 64 * 1024];
    while f.write_all(&block).is_ok() {}
    let small = vec![0u8; 512];
    while f.write_all(&small).is_ok() {}
    let _ = f.flush();
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_loses_nothing_and_recovers_when_space_is_freed() {
    let model = ScriptedModel::start().await;
    let tg = FakeTelegram::start().await;
    let config = format!(
        "{}[agents.main]\nmodel_provider = \"p\"\nchannels = [\"telegram.main\", \"local.probe\"]\n{}[channels.local.probe]\nallowed_users = []\n",
        provider("p", &model.url(), ""),
        switchboard_test_support::config::telegram_main(&tg.url())
    );
    let sandbox = Sandbox::new(&config);
    let Some(_volume) = Small::mount(&sandbox.path().join("data"), "8m") else {
        eprintln!("cannot mount a tmpfs here (not root?); the full-disk test did not run");
        return;
    };
    let gw = Gateway::start(&sandbox, free_port(), "probe").await;
    model.push(Step::text("First answer.").when_last_contains("before"));
    tg.message(private_chat(11, "Ann"), user(11, "Ann"), "before", None, None);
    tg.wait_sent(1, 20).await;

    // Carol's message is taken before the volume fills and its turn ends
    // while it is full; Ann's and Bob's arrive while it is full.
    let carol_answer = || {
        Step::text("Carol, answered.")
            .when_last_contains("slow one")
            .delay(Duration::from_secs(2))
    };
    model.push(carol_answer());
    tg.message(private_chat(13, "Carol"), user(13, "Carol"), "slow one", None, None);
    tokio::time::sleep(Duration::from_millis(700)).await;
    let filler = fill(&sandbox.path().join("data"));
    tg.message(private_chat(11, "Ann"), user(11, "Ann"), "while full", None, None);
    tg.message(private_chat(12, "Bob"), user(12, "Bob"), "me too", None, None);
    tokio::time::sleep(Duration::from_secs(6)).await;
    let while_full = texts(&tg);
    println!("while full: {while_full:?}");
    let told = |chat: i64| {
        tg.sent()
            .iter()
            .filter(|m| {
                m["chat"]["id"] == chat && m["text"].as_str().unwrap_or("").starts_with("I can't answer right now")
            })
            .count()
    };
    for chat in [11, 12, 13] {
        assert_eq!(
            told(chat),
            1,
            "chat {chat} told once that its message waits: {while_full:?}"
        );
    }
    assert!(
        !while_full.iter().any(|t| t.contains("error") || t.contains("disk")),
        "no error text reaches a person: {while_full:?}"
    );
    let log = gw.log();
    assert!(log.contains("the database's volume is full: free space there"), "{log}");

    // Carol's turn may be asked of the model again (its answer was not
    // recorded); Ann's and Bob's are asked once there is room.
    model.push(carol_answer());
    model.push(Step::text("Ann, answered.").when_last_contains("while full"));
    model.push(Step::text("Bob, answered.").when_last_contains("me too"));
    std::fs::remove_file(filler).unwrap();
    tg.wait_sent(7, 60).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let sent = texts(&tg);
    println!("after: {sent:?}");
    for answer in ["First answer.", "Carol, answered.", "Ann, answered.", "Bob, answered."] {
        assert_eq!(
            sent.iter().filter(|t| *t == answer).count(),
            1,
            "{answer:?} once: {sent:?}"
        );
    }
    assert_eq!(sent.len(), 7, "{sent:?}");
}

fn texts(tg: &FakeTelegram) -> Vec<String> {
    tg.sent()
        .iter()
        .map(|m| m["text"].as_str().unwrap_or("").to_string())
        .collect()
}
