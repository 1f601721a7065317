//! `switchboard doctor` against a configuration with a model server that
//! is not running and a Telegram bot whose token the Bot API refuses:
//! both are named with what to change, and the exit code says so.

mod support;

use support::{Sandbox, free_port, provider};
use switchboard_test_support::telegram::FakeTelegram;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_names_a_dead_provider_and_a_refused_token() {
    let tg = FakeTelegram::start().await;
    tg.only_token("123:RIGHT");
    let dead = format!("http://127.0.0.1:{}/v1", free_port());
    let config = format!(
        r#"{}[agents.main]
model_provider = "p"
channels = ["telegram.good", "telegram.bad"]
[channels.telegram.good]
bot_token = "123:RIGHT"
api_url = "{url}"
allowed_users = ["*"]
[channels.telegram.bad]
bot_token = "123:WRONG"
api_url = "{url}"
allowed_users = ["*"]
"#,
        provider("p", &dead, ""),
        url = tg.url()
    );
    let sandbox = Sandbox::new(&config);
    let (code, out, err) = sandbox.run(&["doctor", "--config", "switchboard.toml"]);
    assert_eq!(code, 1, "{out}{err}");
    let line = |needle: &str| {
        out.lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no line with {needle:?} in:\n{out}"))
            .to_string()
    };
    let p = line("provider  p (p-model)");
    assert!(p.contains("FAIL") && p.contains("cannot be reached"), "{p}");
    assert!(p.contains("fix [providers.p].base_url"), "{p}");
    let bad = line("telegram.bad");
    assert!(bad.contains("FAIL") && bad.contains("refused the credentials"), "{bad}");
    assert!(bad.contains("[channels.telegram.bad]"), "{bad}");
    let good = line("telegram.good");
    assert!(good.contains(" ok ") && good.contains("@switchboard_bot"), "{good}");
    // Before the first start there is no database yet: said, not made.
    let db = line("database");
    assert!(db.contains("WARN") && db.contains("not created yet"), "{db}");
    assert!(!sandbox.path().join("data/control_plane.db").exists());
    assert!(out.contains("doctor: 2 problem(s) to fix"), "{out}");
    // A configuration that does not load gets exit code 2 and the reason.
    std::fs::write(sandbox.config_path(), "[agents.main]\nmodel_provider = \"nope\"\n").unwrap();
    let (code, out, _) = sandbox.run(&["doctor", "--config", "switchboard.toml"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("fix the configuration first"), "{out}");
}
