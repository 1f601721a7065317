//! The local API is for this machine's callers: requests addressed to a
//! foreign host (DNS rebinding) or sent by another site's page are refused,
//! local chats carry `cli:` people only, and an alias with a token wants it.

mod support;

use serde_json::json;
use support::{Gateway, Sandbox};
use switchboard_test_support::{ScriptedModel, Step};

async fn setup() -> (ScriptedModel, Sandbox, Gateway) {
    // SAFETY: set before the gateway process is spawned, which inherits it.
    unsafe { std::env::set_var("SB_TEST_LOCAL_TOKEN", "t0ken-for-tests") };
    let secure = "[channels.local.secure]\nallowed_users = [\"*\"]\ntoken = \"env:SB_TEST_LOCAL_TOKEN\"\n";
    support::team_gateway("", secure).await
}

fn hello(user: &str) -> serde_json::Value {
    json!({"chat": "c1", "user": user, "text": "hello", "direct": true})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_hosts_and_origins_are_refused() {
    let (model, _sandbox, gw) = setup().await;
    model.push(Step::text("Hi."));
    let (status, body) = gw
        .post_raw("/local/team/send", &[("host", "evil.test")], hello("cli:ann"))
        .await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("Host 'evil.test' refused"), "{body}");
    let (status, body) = gw
        .post_raw("/local/team/send", &[("host", "evil.test:80")], hello("cli:ann"))
        .await;
    assert_eq!(status, 403, "{body}");
    let (status, body) = gw
        .post_raw("/local/team/press", &[("origin", "https://evil.test")], json!({}))
        .await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("Origin 'https://evil.test' refused"), "{body}");
    // A page on this machine (same loopback origin) and plain callers pass.
    let (status, body) = gw
        .post_raw(
            "/local/team/send",
            &[("origin", "http://localhost:3000")],
            hello("cli:ann"),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert_eq!(model.requests().len(), 1, "only the accepted message reached the model");
    // The refusals were logged, in plain text: the log is a file, not a terminal.
    let log = gw.log();
    assert!(log.contains("local API request refused"), "{log}");
    assert!(!log.contains('\u{1b}'), "colour codes in a log file:\n{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn people_of_other_platforms_cannot_speak_on_a_local_chat() {
    let (model, _sandbox, gw) = setup().await;
    for user in ["tg:12345", "@op:matrix.org", "discord:1", "ann"] {
        let (status, body) = gw.post_raw("/local/team/send", &[], hello(user)).await;
        assert_eq!(status, 400, "{user}: {body}");
        assert!(body.contains("named 'cli:<name>'"), "{body}");
    }
    let press = json!({"chat": "c1", "user": "tg:7", "approval_id": "x", "choice": "allow_once"});
    let (status, _) = gw.post_raw("/local/team/press", &[], press).await;
    assert_eq!(status, 400);
    assert!(model.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_alias_with_a_token_wants_it() {
    let (model, _sandbox, gw) = setup().await;
    model.push(Step::text("Hi."));
    let (status, body) = gw.post_raw("/local/secure/send", &[], hello("cli:ann")).await;
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("Authorization: Bearer"), "{body}");
    let (status, _) = gw
        .post_raw(
            "/local/secure/send",
            &[("authorization", "Bearer wrong")],
            hello("cli:ann"),
        )
        .await;
    assert_eq!(status, 401);
    let (status, body) = gw
        .post_raw(
            "/local/secure/send",
            &[("authorization", "Bearer t0ken-for-tests")],
            hello("cli:ann"),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    // The other alias has no token and needs none.
    let (status, _) = gw.post_raw("/local/team/send", &[], hello("cli:ann")).await;
    assert_eq!(status, 202);
}

/// A request a reverse proxy relayed (nginx's default `proxy_pass` keeps
/// `Host: 127.0.0.1:<port>`) is refused by what the proxy adds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_relayed_by_a_proxy_are_refused() {
    let (model, _sandbox, gw) = setup().await;
    for header in [
        ("x-forwarded-for", "203.0.113.9"),
        ("x-real-ip", "203.0.113.9"),
        ("forwarded", "for=203.0.113.9"),
        ("via", "1.1 nginx"),
    ] {
        let (status, body) = gw.post_raw("/local/team/send", &[header], hello("cli:ann")).await;
        assert_eq!(status, 403, "{header:?}: {body}");
        assert!(body.contains("relayed by a proxy"), "{body}");
    }
    let (status, _) = gw
        .post_raw("/local/team/press", &[("x-forwarded-for", "203.0.113.9")], json!({}))
        .await;
    assert_eq!(status, 403);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(model.requests().is_empty());
}

/// With `[channels.local.<alias>.people]`, the token says who calls: a
/// caller cannot speak as someone else, sees only the chats they are in,
/// and cannot enter another person's direct chat.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn people_by_token_see_only_their_own_chats_and_cannot_act_as_each_other() {
    let team = "[channels.local.team.people]\nann = \"ann-token\"\nbob = \"bob-token\"\n\
                [channels.local.probe]\nallowed_users = []\n";
    let model = ScriptedModel::start().await;
    let port = support::free_port();
    let config = format!(
        "{}[channels.local.team]\nallowed_users = [\"*\"]\n{team}",
        support::main_agent_on(&model.url(), port, "local.team")
    );
    let sandbox = Sandbox::new(&config);
    let gw = Gateway::start(&sandbox, port, "probe").await;
    let ann = [("authorization", "Bearer ann-token")];
    let bob = [("authorization", "Bearer bob-token")];
    let dm = |user: Option<&str>| {
        let mut m = json!({"chat": "dm-ann", "text": "my secret plans", "direct": true});
        if let Some(u) = user {
            m["user"] = json!(u);
        }
        m
    };
    // No token, or a wrong one: refused.
    let (status, body) = gw.post_raw("/local/team/send", &[], dm(Some("cli:ann"))).await;
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("[channels.local.team.people]"), "{body}");
    // Ann's token cannot speak as bob.
    let (status, body) = gw.post_raw("/local/team/send", &ann, dm(Some("cli:bob"))).await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("your token says you are cli:ann"), "{body}");
    // Ann writes in her direct chat (no `user`: the token names her).
    model.push(Step::text("Noted, Ann.").when_last_contains("my secret plans"));
    let (status, body) = gw.post_raw("/local/team/send", &ann, dm(None)).await;
    assert_eq!(status, 202, "{body}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let seen = gw.events_as("team", "ann-token", 0).await;
        if seen.iter().any(|e| e["text"] == "Noted, Ann.") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "ann never saw her answer: {seen:?}"
        );
    }
    // Bob sees nothing of it, and cannot enter her direct chat.
    assert!(gw.events_as("team", "bob-token", 0).await.is_empty());
    let (status, body) = gw.post_raw("/local/team/send", &bob, dm(None)).await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("another person's direct chat"), "{body}");
    let (status, _) = gw
        .post_raw(
            "/local/team/press",
            &bob,
            json!({"chat": "dm-ann", "approval_id": "x", "choice": "deny"}),
        )
        .await;
    assert_eq!(status, 403, "bob cannot press in ann's direct chat");
    assert_eq!(model.requests().len(), 1, "only ann's message reached the model");
    let asked = model.requests()[0].to_string();
    assert!(asked.contains("my secret plans"));
}

/// Over loopback TCP (`[web].listen`, an opt-in) the local API serves only
/// aliases that know their people by token; the rest stay on the UNIX
/// socket, which serves everything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_tcp_only_channels_with_people_tokens_are_served() {
    let team = "[channels.local.team.people]\nann = \"ann-token\"\n[channels.local.open]\nallowed_users = [\"*\"]\n";
    let model = ScriptedModel::start().await;
    let port = support::free_port();
    let config = support::with_listen(
        &format!(
            "{}[channels.local.team]\nallowed_users = [\"*\"]\n{team}",
            support::main_agent_on(&model.url(), port, "local.team")
        ),
        port,
    );
    let sandbox = Sandbox::new(&config);
    let gw = Gateway::start(&sandbox, port, "open").await;
    let tcp = reqwest::Client::new();
    let events = |alias: &str| format!("http://127.0.0.1:{port}/local/{alias}/events?after=0&wait_ms=0");
    let r = tcp.get(events("open")).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 403);
    let body = r.text().await.unwrap();
    assert!(body.contains("UNIX socket ([web].socket) only"), "{body}");
    assert!(body.contains("[channels.local.open.people]"), "{body}");
    let r = tcp
        .post(format!("http://127.0.0.1:{port}/local/open/press"))
        .json(&json!({"chat": "c", "user": "cli:x", "approval_id": "a", "choice": "allow_once"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 403);
    let r = tcp.get(events("team")).bearer_auth("ann-token").send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200, "a channel with people is served over TCP");
    let r = tcp.get(events("team")).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 401, "and wants a person's token there");
    // Health is served over TCP, and everything on the socket.
    let r = tcp
        .get(format!("http://127.0.0.1:{port}/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert!(gw.events("open", 0).await.is_empty());
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(sandbox.path().join("data/switchboard.sock"))
            .unwrap()
            .permissions(),
    );
    assert_eq!(mode & 0o777, 0o600, "the socket is owner-only");
}
