//! A message the gateway took is answered exactly once, whatever moment the
//! process dies: the real binary, killed with SIGKILL (no clean stop), over
//! the fake Bot API, on SQLite and on PostgreSQL.

mod support;

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use support::{Gateway, Sandbox, free_port, fresh_database, main_agent_on};
use switchboard_test_support::telegram::{FakeTelegram, private_chat, user};
use switchboard_test_support::{ScriptedModel, Step};

/// The main agent on `telegram.main` (everyone allowed, tools run without
/// approval), the local probe channel, and `database_url` when given.
fn config(model: &str, tg: &str, port: u16, database_url: Option<&str>) -> String {
    let db = database_url
        .map(|u| format!("database_url = \"{u}\"\n"))
        .unwrap_or_default();
    let telegram = switchboard_test_support::config::telegram_main(tg);
    format!(
        r#"{db}{}[risk_profiles.default]
level = "full"
{telegram}[channels.local.probe]
allowed_users = []
"#,
        main_agent_on(model, port, "telegram.main")
    )
}

/// The peers, and a sandbox with `config` (changed by `edit`).
struct World {
    model: ScriptedModel,
    tg: FakeTelegram,
    port: u16,
    config: String,
    sandbox: Sandbox,
}

async fn world(database_url: Option<&str>, edit: impl Fn(String) -> String) -> World {
    let (model, tg) = (ScriptedModel::start().await, FakeTelegram::start().await);
    let port = free_port();
    let config = edit(config(&model.url(), &tg.url(), port, database_url));
    let sandbox = Sandbox::new(&config);
    World {
        model,
        tg,
        port,
        config,
        sandbox,
    }
}

impl World {
    /// `switchboard run` in the sandbox.
    async fn start(&self) -> Gateway {
        Gateway::start(&self.sandbox, self.port, "probe").await
    }
}

fn text(m: &Value) -> &str {
    m["text"].as_str().unwrap_or("")
}

/// Wait until the model has been asked `n` times.
async fn wait_requests(model: &ScriptedModel, n: usize, secs: u64) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while model.requests().len() < n {
        assert!(
            Instant::now() < deadline,
            "the model was asked {} times",
            model.requests().len()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_whose_turn_waits_on_the_model_when_the_gateway_dies_is_answered_once_after_restart() {
    let w = world(None, |c| c).await;
    let (model, tg) = (&w.model, &w.tg);
    let mut gw = w.start().await;
    model.push(Step::text("too late").delay(Duration::from_secs(30)));
    tg.message(
        private_chat(11, "Ann"),
        user(11, "Ann"),
        "what is the plan?",
        None,
        None,
    );
    wait_requests(model, 1, 20).await;
    gw.kill();

    model.push(Step::text("The plan is ready."));
    let gw = w.start().await;
    let sent = tg.wait_sent(1, 20).await;
    assert_eq!(text(&sent[0]), "The plan is ready.");
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(tg.sent().len(), 1, "answered once");
    let asked = model.requests();
    assert_eq!(asked.len(), 2, "asked again after the restart");
    let users = |req: &Value| {
        req["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "user")
            .count()
    };
    assert_eq!(
        users(&asked[1]),
        1,
        "the re-run starts clean: the question is in the transcript once"
    );
    assert!(
        gw.log().contains("running again a turn a restart interrupted"),
        "{}",
        gw.log()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_killed_after_a_file_write_is_not_run_again_and_the_person_is_told() {
    let w = world(None, |c| c).await;
    let (model, tg) = (&w.model, &w.tg);
    let mut gw = w.start().await;
    model.push(Step::tool_call(
        "file_write",
        json!({"path": "log.txt", "content": "deployed\n", "append": true}),
    ));
    // The answer after the write never comes before the crash.
    model.push(Step::text("too late").delay(Duration::from_secs(30)));
    tg.message(
        private_chat(11, "Ann"),
        user(11, "Ann"),
        "deploy and log it",
        None,
        None,
    );
    wait_requests(model, 2, 20).await;
    let file = w.sandbox.path().join("workspace/main/log.txt");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "deployed\n");
    gw.kill();

    let gw = w.start().await;
    let sent = tg.wait_sent(1, 20).await;
    let told = text(&sent[0]);
    assert!(
        told.starts_with("The gateway restarted while it was working on this message. It had already started:"),
        "{told}"
    );
    assert!(told.contains("file_write") && told.contains("log.txt"), "{told}");
    assert!(told.contains("ask again"), "{told}");
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(tg.sent().len(), 1, "one message");
    assert_eq!(model.requests().len(), 2, "the turn was not run again");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "deployed\n",
        "the file was written once"
    );
    drop(gw);

    // The next turn sees what happened.
    model.push(Step::text("Noted."));
    let _gw = w.start().await;
    tg.message(private_chat(11, "Ann"), user(11, "Ann"), "and now?", None, None);
    tg.wait_sent(2, 20).await;
    let history = model.requests()[2]["messages"].to_string();
    assert!(history.contains("interrupted by a restart"), "{history}");
}

/// A pending message whose sender was taken off the allow list while the
/// gateway was down is not answered after the restart (fail closed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pending_message_from_a_sender_no_longer_allowed_is_not_answered() {
    let w = world(None, |c| c).await;
    let (model, tg) = (&w.model, &w.tg);
    let mut gw = w.start().await;
    model.push(Step::text("too late").delay(Duration::from_secs(30)));
    tg.message(private_chat(11, "Ann"), user(11, "Ann"), "hello", None, None);
    wait_requests(model, 1, 20).await;
    gw.kill();
    let narrowed = w
        .config
        .replace("allowed_users = [\"*\"]", "allowed_users = [\"tg:12\"]");
    std::fs::write(w.sandbox.config_path(), narrowed).unwrap();
    let gw = w.start().await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(tg.sent().is_empty(), "{:?}", tg.sent());
    assert_eq!(model.requests().len(), 1, "not run again");
    assert!(gw.log().contains("no longer allowed"), "{}", gw.log());
}

/// The local API answers 202 only once the message is written: a crash
/// after that still gets it answered (into the chat's new event log).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_message_accepted_before_a_crash_is_answered_after_restart() {
    // The fake Bot API must outlive the gateway.
    let w = world(None, |c| {
        c.replace(
            "channels = [\"telegram.main\"]",
            "channels = [\"telegram.main\", \"local.probe\"]",
        )
        .replace("allowed_users = []", "allowed_users = [\"cli:ann\"]")
    })
    .await;
    let model = &w.model;
    let mut gw = w.start().await;
    model.push(Step::text("too late").delay(Duration::from_secs(30)));
    gw.send("probe", "room", "cli:ann", "local question", false, true).await;
    wait_requests(model, 1, 20).await;
    gw.kill();
    model.push(Step::text("Local answer."));
    let gw = w.start().await;
    let mut cursor = 0;
    let answer = gw.wait_for("probe", &mut cursor, 20, |e| e["kind"] == "message").await;
    assert_eq!(
        (answer["chat"].as_str(), answer["text"].as_str()),
        (Some("room"), Some("Local answer."))
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(gw.events("probe", cursor).await.is_empty(), "answered once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redelivered_update_is_answered_once() {
    let w = world(None, |c| c).await;
    let (model, tg) = (&w.model, &w.tg);
    let mut gw = w.start().await;
    model.echo_after(Duration::ZERO);
    tg.message(private_chat(11, "Ann"), user(11, "Ann"), "once please", None, None);
    let first = tg.last_update_id();
    tg.wait_sent(1, 20).await;
    // The same message again, while running and after a restart.
    tg.redeliver(first);
    tokio::time::sleep(Duration::from_secs(1)).await;
    gw.kill();
    tg.redeliver(first);
    tg.message(private_chat(11, "Ann"), user(11, "Ann"), "a new one", None, None);
    let gw = w.start().await;
    tg.wait_sent(2, 20).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let sent = tg.sent();
    let texts: Vec<&str> = sent.iter().map(text).collect();
    assert_eq!(texts, ["echo: once please", "echo: a new one"]);
    assert_eq!(model.requests().len(), 2);
    assert_eq!(
        gw.log().matches("a message taken before was offered again").count(),
        1,
        "{}",
        gw.log()
    );
}

/// Kill the gateway at random moments while people keep writing; at the
/// end every message has exactly one answer. The one allowed exception is
/// a reply whose delivery the kill cut off after the platform took it: the
/// next start says so in its log and sends it again.
async fn random_kills(database_url: Option<&str>, rounds: u32) {
    let w = world(database_url, |c| c).await;
    let (model, tg) = (&w.model, &w.tg);
    // Each answer names every message it answers (a person's messages
    // that queue or come quickly are answered together).
    model.echo_joined_after(Duration::from_millis(150));
    let mut seed: u64 = std::process::id() as u64 ^ 0x9e37_79b9_7f4a_7c15;
    let mut random = move |below: u64| {
        // xorshift: enough to spread the kills, and printed to replay.
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % below
    };
    let mut asked = Vec::new();
    let mut logs = String::new();
    for round in 0..rounds {
        let mut gw = w.start().await;
        for i in 0..3 {
            let n = asked.len();
            // Two people, so one session has messages queued behind each other.
            let who = 11 + (i % 2) as i64;
            let question = format!("question {n}");
            tg.message(private_chat(who, "P"), user(who, "P"), &question, None, None);
            asked.push(format!("echo: {question}"));
            tokio::time::sleep(Duration::from_millis(random(120))).await;
        }
        let wait = random(700);
        tokio::time::sleep(Duration::from_millis(wait)).await;
        gw.kill();
        logs.push_str(&format!("--- round {round} killed {wait} ms after the last message\n"));
        logs.push_str(&gw.log());
    }
    let gw = w.start().await;
    let deadline = Instant::now() + Duration::from_secs(90);
    let count = || {
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        for m in tg.sent() {
            let answered = text(&m).strip_prefix("echo: ").unwrap_or(text(&m));
            for part in answered.split(" + ") {
                *seen.entry(format!("echo: {part}")).or_default() += 1;
            }
        }
        seen
    };
    while asked.iter().any(|a| !count().contains_key(a)) {
        if Instant::now() > deadline {
            let missing: Vec<_> = asked.iter().filter(|a| !count().contains_key(*a)).collect();
            panic!("never answered: {missing:?}\n{logs}\n--- last start\n{}", gw.log());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    logs.push_str(&gw.log());
    let seen = count();
    let in_doubt = logs
        .matches("a reply was being delivered when its gateway process stopped")
        .count();
    // A delivery in doubt is one reply sent again, and a merged reply
    // answers several questions: count repeated replies, not questions.
    let mut replies: BTreeMap<String, usize> = BTreeMap::new();
    for m in tg.sent() {
        *replies.entry(text(&m).to_string()).or_default() += 1;
    }
    let repeated: usize = replies.values().map(|n| n - 1).sum();
    // And no question is answered by two different replies.
    let mut homes: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for reply in replies.keys() {
        for part in reply.strip_prefix("echo: ").unwrap_or(reply).split(" + ") {
            homes.entry(part).or_default().push(reply);
        }
    }
    let twice: Vec<_> = homes.iter().filter(|(_, r)| r.len() > 1).collect();
    assert!(twice.is_empty(), "answered by two different replies: {twice:?}");
    let extra: Vec<_> = seen.keys().filter(|k| !asked.contains(k)).collect();
    assert!(extra.is_empty(), "answers nobody asked for: {extra:?}");
    assert!(
        repeated <= in_doubt,
        "{repeated} answers repeated, {in_doubt} deliveries cut off by a kill: {seen:#?}\n{logs}"
    );
    eprintln!(
        "{} messages over {rounds} kills: all answered, {repeated} repeated ({in_doubt} deliveries cut off by a kill)",
        asked.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_kills_lose_nothing_and_repeat_nothing_on_sqlite() {
    random_kills(None, 20).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_kills_lose_nothing_and_repeat_nothing_on_postgres() {
    let Some(url) = fresh_database("durable") else {
        eprintln!("SWITCHBOARD_TEST_POSTGRES_URL not set; the PostgreSQL run of this test is skipped here");
        return;
    };
    random_kills(Some(&url), 20).await;
}
