//! What the console tests share: a gateway with a team chat, an ops room
//! and the console on; signing in by link (in a browser or over HTTP);
//! screenshots; POSTs made from a page.
#![allow(dead_code)]

use crate::support::{Gateway, Sandbox, free_port, team_with_reviewer};
use serde_json::json;
use std::path::Path;
use switchboard_test_support::ScriptedModel;
use switchboard_test_support::browser::{Browser, chromium};

pub(crate) fn config(main: &str, reviewer: &str, port: u16) -> String {
    // The team chat with a reviewer, supervised, approvals in the ops room
    // (alice decides; viewer may only look), prices so calls cost.
    let extra = format!(
        "{}timeout_secs = 120\n[cost.prices.pmain]\ninput = 3.0\noutput = 15.0\n[cost.prices.prev]\ninput = 1.0\noutput = 5.0\n\
         [channels.local.ops]\nallowed_users = [\"cli:alice\", \"cli:viewer\"]\nrooms = {{ \"ops-room\" = \"room-1\" }}\n{DESK}",
        switchboard_test_support::config::ops_route("cli:alice")
    );
    team_with_reviewer(main, reviewer, port, &extra)
        .replacen(
            "level = \"full\"\n",
            "level = \"supervised\"\nauto_approve = [\"delegate\", \"sessions_spawn\", \"memory_recall\"]\n",
            1,
        )
        .replacen(
            "[web]\n",
            &format!("[web]\nlisten = \"127.0.0.1:{port}\"\nconsole = true\nconsole_users = [\"cli:viewer\"]\n"),
            1,
        )
}

pub(crate) struct Setup {
    pub(crate) main: ScriptedModel,
    pub(crate) reviewer: ScriptedModel,
    pub(crate) sandbox: Sandbox,
    pub(crate) gw: Gateway,
    pub(crate) base: String,
}

/// Whether Chromium is installed. `scripts/test.sh` installs it and sets
/// `SWITCHBOARD_TEST_REQUIRE_CHROMIUM`, so under it (and in CI) a missing
/// browser fails the tests; elsewhere they are skipped with a note.
pub(crate) fn browser_available() -> bool {
    let found = chromium().is_some();
    if !found {
        assert!(
            std::env::var_os("SWITCHBOARD_TEST_REQUIRE_CHROMIUM").is_none(),
            "no Chromium, and these tests are required: install Debian's chromium package"
        );
        eprintln!("SKIPPED: no Chromium (install Debian's chromium package; scripts/test.sh does)");
    }
    found
}

pub(crate) async fn setup() -> Setup {
    let (main, reviewer) = (ScriptedModel::start().await, ScriptedModel::start().await);
    let port = free_port();
    let sandbox = Sandbox::new(&config(&main.url(), &reviewer.url(), port));
    let gw = Gateway::start(&sandbox, port, "team").await;
    Setup {
        main,
        reviewer,
        sandbox,
        gw,
        base: format!("http://127.0.0.1:{port}"),
    }
}

/// A local chat whose people are known by token (console links are given
/// only there, or on chat platforms): alice, viewer and bob.
pub(crate) const DESK: &str = "[channels.local.desk]\nallowed_users = [\"cli:alice\", \"cli:viewer\", \"cli:bob\"]\n\
     [channels.local.desk.people]\nalice = \"alice-token\"\nviewer = \"viewer-token\"\nbob = \"bob-token\"\n";

/// `user`'s bearer token on `local.desk`.
pub(crate) fn token_of(user: &str) -> String {
    format!("{}-token", user.trim_start_matches("cli:"))
}

/// `user` sends `/console` into `chat` of `local.desk`; the bot's answer.
pub(crate) async fn ask_console(gw: &Gateway, user: &str, chat: &str, direct: bool) -> serde_json::Value {
    let token = token_of(user);
    let cursor = gw
        .events_as("desk", &token, 0)
        .await
        .last()
        .map_or(0, |e| e["seq"].as_u64().unwrap());
    let auth = format!("Bearer {token}");
    let (status, body) = gw
        .post_raw(
            "/local/desk/send",
            &[("authorization", auth.as_str())],
            json!({"chat": chat, "text": "/console", "direct": direct}),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let events = gw.events_as("desk", &token, cursor).await;
        if let Some(e) = events.iter().find(|e| e["chat"] == chat && e["kind"] == "message") {
            return e.clone();
        }
        assert!(std::time::Instant::now() < deadline, "no answer to /console in {chat}");
    }
}

/// `user` asks for a link in their direct chat on `local.desk`; the link.
pub(crate) async fn link_for(gw: &Gateway, user: &str) -> String {
    let answer = ask_console(gw, user, &format!("dm-{user}"), true).await;
    let text = answer["text"].as_str().unwrap();
    let link = text.lines().last().unwrap().to_string();
    assert!(link.contains("/console/signin#"), "{text}");
    link
}

/// Open `link` and press its button; the page we land on.
pub(crate) async fn sign_in(browser: &Browser, link: &str) -> String {
    browser.goto(link).await.unwrap();
    browser.click("#signin").await.unwrap();
    browser
        .wait_for(
            "document.readyState === 'complete' && !document.getElementById('signin') && document.body.innerText",
            20,
        )
        .await
        .unwrap();
    browser
        .eval("location.pathname + ' ' + document.body.innerText")
        .await
        .unwrap()
        .as_str()
        .unwrap()
        .to_string()
}

/// Save the current page at desktop and phone sizes under the sandbox
/// and check nothing runs off the side.
pub(crate) async fn screenshots(browser: &Browser, dir: &Path, name: &str) {
    std::fs::create_dir_all(dir).unwrap();
    for (w, h, size) in [(1280, 800, "desktop"), (390, 844, "mobile")] {
        let path = dir.join(format!("{name}-{size}.png"));
        browser.screenshot(&path, w, h).await.unwrap();
        assert!(std::fs::metadata(&path).unwrap().len() > 1000, "{}", path.display());
        let overflow = browser
            .eval("document.documentElement.scrollWidth - window.innerWidth")
            .await
            .unwrap();
        assert!(
            overflow.as_i64().unwrap() <= 1,
            "{name} at {w}px runs {overflow}px off the side"
        );
        let nav = browser
            .eval("getComputedStyle(document.querySelector('header.top nav') || document.body).display")
            .await
            .unwrap();
        assert_ne!(nav, json!("none"), "{name} at {w}px hides the navigation");
        if let Ok(out) = std::env::var("SWITCHBOARD_CONSOLE_SCREENSHOTS") {
            std::fs::create_dir_all(&out).unwrap();
            std::fs::copy(&path, Path::new(&out).join(path.file_name().unwrap())).unwrap();
        }
    }
    browser.viewport(1280, 800).await.unwrap();
}

/// A same-origin POST from the page (with or without its CSRF token):
/// `[status, text]`.
pub(crate) async fn page_post(browser: &Browser, path: &str, body: &str, with_token: bool) -> (u16, String) {
    let headers = if with_token {
        "{'X-CSRF-Token': document.querySelector('meta[name=\"csrf-token\"]').content}"
    } else {
        "{}"
    };
    let v = browser
        .eval(&format!(
            "fetch({}, {{method: 'POST', headers: {headers}, body: {}}}).then(async r => [r.status, await r.text()])",
            json!(path),
            json!(body)
        ))
        .await
        .unwrap();
    (v[0].as_u64().unwrap() as u16, v[1].as_str().unwrap().to_string())
}

/// Whether the run tree shows a run of `kind` in `status`.
pub(crate) fn tree_has(kind: &str, status: &str) -> String {
    format!(
        "[...document.querySelectorAll('li.run')].some(li => li.querySelector('.kind').innerText.toLowerCase() === '{kind}' && li.dataset.status === '{status}')"
    )
}

/// Sign in over plain HTTP (the link's form, as the browser posts it):
/// the session cookie.
pub(crate) async fn http_session(gw: &Gateway, base: &str, user: &str) -> String {
    crate::support::session_from_link(base, &link_for(gw, user).await).await
}
