//! The console's health page follows a channel's connection: a Telegram
//! adapter that loses the Bot API and gets it back (over HTTP, no browser).

mod console_fx;
mod support;

use console_fx::http_session;
use std::time::Duration;
use support::{Gateway, Sandbox, free_port, provider};
use switchboard_test_support::ScriptedModel;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_follows_a_channel_that_loses_its_platform_and_gets_it_back() {
    use switchboard_test_support::telegram::FakeTelegram;
    let model = ScriptedModel::start().await;
    let tg = FakeTelegram::start().await;
    let port = free_port();
    let config = format!(
        r#"{}[web]
listen = "127.0.0.1:{port}"
console = true
console_users = ["cli:alice"]
[agents.main]
model_provider = "p"
channels = ["telegram.main"]
{}[channels.local.ops]
allowed_users = ["cli:alice"]
{}"#,
        provider("p", &model.url(), ""),
        switchboard_test_support::config::telegram_main(&tg.url()),
        console_fx::DESK
    );
    let sandbox = Sandbox::new(&config);
    let gw = Gateway::start(&sandbox, port, "ops").await;
    let base = format!("http://127.0.0.1:{port}");
    let cookie = http_session(&gw, &base, "cli:alice").await;
    let http = reqwest::Client::new();
    let state = || async {
        let page = http
            .get(format!("{base}/console/health"))
            .header("Cookie", &cookie)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let row = page
            .split("data-channel=\"telegram.main\"")
            .nth(1)
            .unwrap_or_default()
            .to_string();
        row.split("</tr>").next().unwrap_or_default().to_string()
    };
    let wait_for = |needle: &'static str| {
        let state = &state;
        async move {
            for _ in 0..150 {
                let row = state().await;
                if row.contains(needle) {
                    return row;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            panic!("telegram.main never showed {needle}: {}", state().await);
        }
    };
    wait_for(">connected<").await;
    tg.set_down(true);
    let row = wait_for("getUpdates failed").await;
    assert!(row.contains("reconnecting") || row.contains(">down<"), "{row}");
    tg.set_down(false);
    // A held poll returns when something happens.
    tg.message(
        switchboard_test_support::telegram::private_chat(7, "Bob"),
        switchboard_test_support::telegram::user(7, "Bob"),
        "/help",
        None,
        None,
    );
    let row = wait_for(">connected<").await;
    assert!(row.contains("getUpdates failed"), "the last error stays visible: {row}");
    // Without a session, nothing is shown.
    let anonymous = http.get(format!("{base}/console/health")).send().await.unwrap();
    assert_eq!(anonymous.status().as_u16(), 401);
}
