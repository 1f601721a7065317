//! `switchboard backup` while the gateway answers 100 direct messages: the
//! copy opens on its own and holds every message answered before it was
//! taken; `restore` refuses while a gateway runs and puts the copy back
//! once it is stopped, keeping the old database beside it.

mod support;

use std::time::Duration;
use support::{Gateway, Sandbox, free_port, telegram_dm_config};
use switchboard_store::Store;
use switchboard_test_support::telegram::{FakeTelegram, private_chat, user};
use switchboard_test_support::{ScriptedModel, Step};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_taken_while_answering_holds_every_answered_message() {
    let model = ScriptedModel::start().await;
    let tg = FakeTelegram::start().await;
    let port = free_port();
    let sandbox = Sandbox::new(&telegram_dm_config(&model.url(), &tg.url(), port));
    let mut gw = Gateway::start(&sandbox, port, "probe").await;
    // A hundred people write, one every 30 ms, so answers keep coming for
    // about three seconds; the backup is taken in the middle.
    for i in 0..100 {
        model.push(Step::text(format!("answer {i}")).delay(Duration::from_millis(40)));
    }
    let tg = std::sync::Arc::new(tg);
    let writer = tg.clone();
    let people = tokio::spawn(async move {
        for i in 0..100 {
            let id = 700 + i;
            writer.message(
                private_chat(id, "P"),
                user(id, "P"),
                &format!("question {i}"),
                None,
                None,
            );
            tokio::time::sleep(Duration::from_millis(30)).await;
        }
    });
    tg.wait_sent(20, 60).await;
    let answered_before = tg.sent_count();
    let copy = sandbox.path().join("copy.db");
    let (code, out, err) = sandbox.run(&["backup", "--config", "switchboard.toml", copy.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("integrity check passed"), "{out}");
    people.await.unwrap();
    let sent = tg.wait_sent(100, 90).await;
    assert!(
        answered_before < 100,
        "the backup was taken while answers were still being sent ({answered_before} of 100 sent)"
    );
    // The copy, opened on its own, holds every answer sent before it.
    let url = format!("sqlite://{}", copy.display());
    let store = Store::open(&url).await.unwrap();
    let (_, done) = store.inbox().counts().await.unwrap();
    assert!(
        done >= answered_before as i64,
        "{done} answered messages in the copy, {answered_before} answers were sent before it"
    );
    store.close().await;
    let summary = switchboard_store::verify_backup(&copy).await.unwrap();
    assert!(summary.messages >= 2 * answered_before as i64, "{summary:?}");
    assert_eq!(sent.len(), 100);
    // The same file twice is refused (nothing is overwritten).
    let (code, _, err) = sandbox.run(&["backup", "--config", "switchboard.toml", copy.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(err.contains("exists already"), "{err}");

    // Restore: refused while the gateway runs, done once it stopped.
    let (code, _, err) = sandbox.run(&["restore", "--config", "switchboard.toml", copy.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(err.contains("a gateway is running on this database"), "{err}");
    gw.kill();
    let (code, out, err) = sandbox.run(&["restore", "--config", "switchboard.toml", copy.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("the previous database is kept as"), "{out}");
    let kept = std::fs::read_dir(sandbox.path().join("data"))
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().contains(".before-restore-"))
        .count();
    assert!(kept >= 1, "the old database is kept");
    let restored = switchboard_store::verify_backup(&sandbox.path().join("data/control_plane.db"))
        .await
        .unwrap();
    assert_eq!((restored.inbox, restored.messages), (summary.inbox, summary.messages));
    // A file that is not a database is refused before anything moves.
    std::fs::write(sandbox.path().join("junk.db"), b"not a database").unwrap();
    let (code, _, err) = sandbox.run(&["restore", "--config", "switchboard.toml", "junk.db"]);
    assert_ne!(code, 0);
    assert!(err.contains("is not a usable backup"), "{err}");
}
