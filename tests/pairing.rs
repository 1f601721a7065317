//! Pairing through `switchboard run` and a loopback Bot API server: where
//! the allow list says "paired", a stranger's direct message gets a code
//! and nothing else, the ops room gets the request with Allow / Deny, only
//! an approver's press (or `/pair CODE`) lets the person in, `/unpair`
//! sends them away, codes lapse after their hour, and no more than three
//! requests wait at once. Nobody is on the allow list but the people let
//! in: the approver's presses and commands are taken wherever the bot sees
//! them, and anyone else's press is answered with a refusal (never a
//! spinner).

mod support;

use serde_json::Value;
use std::time::Duration;
use support::{Gateway, Sandbox, free_port, main_agent_on, ops_room_approvals};
use switchboard_test_support::telegram::{BOT_USERNAME, FakeTelegram, button, private_chat, supergroup, user};
use switchboard_test_support::{ScriptedModel, Step};

const OPS: i64 = -100_300;
const APPROVER: i64 = 7;

fn config(model: &str, tg: &str, port: u16) -> String {
    format!(
        r#"{}{}[channels.telegram.main]
bot_token = "123:TEST"
api_url = "{tg}"
allowed_users = ["paired"]
streaming = "off"
rooms = {{ "ops" = "{OPS}" }}
[channels.local.probe]
allowed_users = []
"#,
        main_agent_on(model, port, "telegram.main"),
        ops_room_approvals("telegram.main", &format!("tg:{APPROVER}"))
    )
}

async fn setup() -> (ScriptedModel, FakeTelegram, Sandbox, Gateway) {
    let model = ScriptedModel::start().await;
    let tg = FakeTelegram::start().await;
    let port = free_port();
    let sandbox = Sandbox::new(&config(&model.url(), &tg.url(), port));
    let gw = Gateway::start(&sandbox, port, "probe").await;
    (model, tg, sandbox, gw)
}

fn text(m: &Value) -> &str {
    m["text"].as_str().unwrap_or("")
}

fn to(sent: &[Value], chat: i64) -> Vec<Value> {
    sent.iter().filter(|m| m["chat"]["id"] == chat).cloned().collect()
}

/// The code in a message that gives one (`...code: ABCD2345 ...`).
fn code_in(message: &str) -> String {
    let at = message.find("code: ").expect("a code") + "code: ".len();
    message[at..at + 8].to_string()
}

/// The bot's messages to `chat`, once there are at least `n`.
async fn wait_for_chat(tg: &FakeTelegram, chat: i64, n: usize) -> Vec<Value> {
    for _ in 0..200 {
        let got = to(&tg.sent(), chat);
        if got.len() >= n {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("fewer than {n} messages to {chat}: {:?}", tg.sent());
}

/// Sends `text` to the bot in the approver's direct chat; returns the answer.
async fn approver_types(tg: &FakeTelegram, text: &str) -> String {
    let before = to(&tg.sent(), APPROVER).len();
    tg.message(private_chat(APPROVER, "Ops"), user(APPROVER, "Ops"), text, None, None);
    for _ in 0..100 {
        let answers = to(&tg.sent(), APPROVER);
        if answers.len() > before {
            return self::text(&answers[before]).to_string();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no answer to {text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stranger_gets_a_code_and_only_an_approver_lets_them_in() {
    let (model, tg, _sandbox, _gw) = setup().await;
    tg.message(private_chat(555, "Eve"), user(555, "Eve"), "hello?", None, None);
    let sent = tg.wait_sent(2, 20).await;
    let told = to(&sent, 555);
    assert_eq!(told.len(), 1, "{sent:?}");
    let code = code_in(text(&told[0]));
    let prompt = to(&sent, OPS).pop().expect("the request in the ops room");
    assert!(
        text(&prompt).contains("tg:555 (Eve)") && text(&prompt).contains(&code),
        "{}",
        text(&prompt)
    );
    let labels: Vec<&str> = prompt["reply_markup"]["inline_keyboard"][0]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["text"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["Allow", "Deny"]);
    // Writing again while the code waits brings nothing: no second code,
    // no model call.
    tg.message(private_chat(555, "Eve"), user(555, "Eve"), "anyone there?", None, None);
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(tg.sent().len(), 2);
    assert!(model.requests().is_empty(), "a stranger never reaches the model");

    // Someone in the ops room who is not an approver presses Allow.
    let allow = button(&prompt, "Allow");
    tg.press(user(12, "Bob"), prompt.clone(), &allow);
    let answers = tg.wait_calls("answercallbackquery", 1, 20).await;
    assert!(
        text(&answers[0]).starts_with("tg:12 may not decide pairing"),
        "{}",
        answers[0]
    );
    tg.message(private_chat(555, "Eve"), user(555, "Eve"), "still waiting", None, None);
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(model.requests().is_empty());

    // The approver presses Allow: Eve is told, and answered from now on.
    tg.press(user(APPROVER, "Ops"), prompt.clone(), &allow);
    let answers = tg.wait_calls("answercallbackquery", 2, 20).await;
    assert_eq!(
        text(&answers[1]),
        "tg:555 (Eve) may talk to the bot on telegram.main now."
    );
    let sent = tg.wait_sent(3, 20).await;
    assert_eq!(
        text(&to(&sent, 555)[1]),
        "An operator let you in: you can talk to me now."
    );
    let edits = tg.calls("editmessagetext");
    assert!(text(&edits[0]).contains("by tg:7"), "{}", text(&edits[0]));
    model.push(Step::text("Welcome, Eve."));
    tg.message(private_chat(555, "Eve"), user(555, "Eve"), "hi again", None, None);
    let sent = tg.wait_sent(4, 20).await;
    assert_eq!(text(&to(&sent, 555)[2]), "Welcome, Eve.");

    let people = approver_types(&tg, "/people").await;
    assert!(
        people.contains("tg:555 (Eve) on telegram.main for main: paired by tg:7"),
        "{people}"
    );
    // A person let in may not list or send away others.
    tg.message(private_chat(555, "Eve"), user(555, "Eve"), "/unpair tg:7", None, None);
    let sent = tg.wait_sent(6, 20).await;
    assert!(
        text(&to(&sent, 555)[3]).starts_with("tg:555 may not send people away"),
        "{sent:?}"
    );

    let unpaired = approver_types(&tg, "/unpair tg:555").await;
    assert!(
        unpaired.starts_with("tg:555 may no longer talk to the bot"),
        "{unpaired}"
    );
    let before = (tg.sent().len(), model.requests().len());
    tg.message(private_chat(555, "Eve"), user(555, "Eve"), "hello after", None, None);
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(
        (tg.sent().len(), model.requests().len()),
        before,
        "sent away: no answer, no new code"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_most_three_wait_and_codes_lapse_after_their_hour() {
    let (model, tg, sandbox, _gw) = setup().await;
    for s in 100..110 {
        tg.message(private_chat(s, "S"), user(s, "Stranger"), "let me in", None, None);
    }
    // Three codes and three requests; seven are told to come back later.
    let sent = tg.wait_sent(13, 30).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let sent_all = tg.sent();
    assert_eq!(sent_all.len(), 13, "{sent:?}");
    let codes: Vec<&Value> = sent_all
        .iter()
        .filter(|m| m["chat"]["id"] != OPS && text(m).contains("code: "))
        .collect();
    let full = sent_all
        .iter()
        .filter(|m| text(m).contains("too many people are waiting"))
        .count();
    let prompts = to(&sent_all, OPS);
    assert_eq!((codes.len(), full, prompts.len()), (3, 7, 3));
    let first_code = code_in(text(codes[0]));

    // The hour passes for these requests (their deadlines moved back on
    // the control plane's clock).
    let db = sqlx::SqlitePool::connect(&format!(
        "sqlite://{}",
        sandbox.path().join("data/control_plane.db").display()
    ))
    .await
    .unwrap();
    sqlx::query("UPDATE pairings SET expires_at = expires_at - 3600001")
        .execute(&db)
        .await
        .unwrap();
    let typed = approver_types(&tg, &format!("/pair {}", first_code.to_lowercase())).await;
    assert!(typed.starts_with("No waiting request has the code"), "{typed}");
    tg.press(user(APPROVER, "Ops"), prompts[0].clone(), &button(&prompts[0], "Allow"));
    let answers = tg.wait_calls("answercallbackquery", 1, 20).await;
    assert!(text(&answers[0]).contains("expired"), "{}", answers[0]);

    // Places are free again: a new stranger gets a code, and the
    // approver's `/pair CODE` lets them in.
    tg.message(private_chat(200, "New"), user(200, "New"), "hi", None, None);
    let sent = tg.wait_sent(sent_all.len() + 3, 20).await;
    let code = code_in(text(&to(&sent, 200)[0]));
    let paired = approver_types(&tg, &format!("/pair {code}")).await;
    assert_eq!(paired, "tg:200 (New) may talk to the bot on telegram.main now.");
    // A denied person is told once, and gets nothing more (no new code).
    let prompts_before = to(&tg.sent(), OPS).len();
    tg.message(private_chat(201, "Denied"), user(201, "Denied"), "hi", None, None);
    let prompt = wait_for_chat(&tg, OPS, prompts_before + 1).await.pop().unwrap();
    assert!(text(&prompt).contains("tg:201 (Denied)"), "{}", text(&prompt));
    tg.press(user(APPROVER, "Ops"), prompt.clone(), &button(&prompt, "Deny"));
    let told = wait_for_chat(&tg, 201, 2).await;
    assert_eq!(
        text(&told[1]),
        "Sorry, an operator declined your request to use this bot."
    );
    tg.message(private_chat(201, "Denied"), user(201, "Denied"), "please?", None, None);
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(to(&tg.sent(), 201).len(), 2, "told once");
    // In a group, strangers are not answered at all (no code there).
    tg.message(
        supergroup(-100_900, "g"),
        user(300, "G"),
        &format!("@{BOT_USERNAME} hi"),
        None,
        None,
    );
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(to(&tg.sent(), -100_900).is_empty());
    assert!(model.requests().is_empty());
}

/// The csrf token a console page carries.
fn csrf_of(html: &str) -> String {
    let at = html.find("name=\"csrf-token\" content=\"").expect("a csrf meta tag") + 27;
    html[at..].split('"').next().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_lists_people_and_lets_an_approver_in_and_out() {
    let model = ScriptedModel::start().await;
    let tg = FakeTelegram::start().await;
    let port = free_port();
    let config = config(&model.url(), &tg.url(), port).replacen(
        "[web]\n",
        &format!("[web]\nlisten = \"127.0.0.1:{port}\"\nconsole = true\n"),
        1,
    );
    let sandbox = Sandbox::new(&config);
    let _gw = Gateway::start(&sandbox, port, "probe").await;
    let base = format!("http://127.0.0.1:{port}");
    tg.message(private_chat(600, "Zed"), user(600, "Zed"), "hello", None, None);
    tg.wait_sent(2, 20).await;

    // The approver signs in with the link /console gives in their DM.
    let link = approver_types(&tg, "/console").await;
    let cookie = support::session_from_link(&base, &link).await;
    let http = reqwest::Client::new();
    let page = |http: reqwest::Client, cookie: String| {
        let url = format!("{base}/console/people");
        async move {
            http.get(url)
                .header("cookie", cookie)
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap()
        }
    };
    let html = page(http.clone(), cookie.clone()).await;
    assert!(html.contains("tg:600") && html.contains("waiting"), "{html}");
    let at = html.find("/console/people/pair-").expect("an Allow button");
    let decide = html[at..].split('"').next().unwrap().to_string();
    let csrf = csrf_of(&html);
    let post = |path: String, body: &'static str| {
        let (http, cookie, csrf, base) = (http.clone(), cookie.clone(), csrf.clone(), base.clone());
        async move {
            let r = http
                .post(format!("{base}{path}"))
                .header("cookie", cookie)
                .header("x-csrf-token", csrf)
                .body(body)
                .send()
                .await
                .unwrap();
            (r.status().as_u16(), r.text().await.unwrap())
        }
    };
    assert_eq!(
        post(decide, "once").await,
        (
            200,
            "tg:600 (Zed) may talk to the bot on telegram.main now.".to_string()
        )
    );
    let html = page(http.clone(), cookie.clone()).await;
    assert!(html.contains("paired") && html.contains(">Unpair<"), "{html}");
    model.push(Step::text("Hello Zed."));
    tg.message(private_chat(600, "Zed"), user(600, "Zed"), "may I?", None, None);
    let sent = tg.wait_sent(5, 20).await;
    assert!(to(&sent, 600).iter().any(|m| text(m) == "Hello Zed."), "{sent:?}");
    let (status, said) = post("/console/people/unpair".into(), "tg:600").await;
    assert_eq!(
        (status, said.starts_with("tg:600 may no longer talk")),
        (200, true),
        "{said}"
    );
    let html = page(http, cookie).await;
    assert!(html.contains("revoked"), "{html}");
}

/// An approver a reload took off the route lets nobody in: the press on a
/// request made before the reload is refused and the request stays open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approver_removed_by_a_reload_lets_nobody_in() {
    let (_model, tg, sandbox, gw) = setup().await;
    tg.message(private_chat(555, "Eve"), user(555, "Eve"), "hello?", None, None);
    let prompt = wait_for_chat(&tg, OPS, 1).await.pop().unwrap();
    let config = std::fs::read_to_string(sandbox.config_path()).unwrap();
    let moved = config.replace(&format!("approvers = [\"tg:{APPROVER}\"]"), "approvers = [\"tg:8\"]");
    assert_ne!(moved, config);
    std::fs::write(sandbox.config_path(), moved).unwrap();
    gw.signal("HUP");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !gw.log().contains("configuration reloaded") {
        assert!(std::time::Instant::now() < deadline, "no reload: {}", gw.log());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tg.press(user(APPROVER, "Ops"), prompt.clone(), &button(&prompt, "Allow"));
    let answers = tg.wait_calls("answercallbackquery", 1, 20).await;
    assert!(
        text(&answers[0]).starts_with(&format!("tg:{APPROVER} is no longer an approver")),
        "{}",
        answers[0]
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(to(&tg.sent(), 555).len(), 1, "only the code: Eve was not let in");
}
