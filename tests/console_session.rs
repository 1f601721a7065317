//! Console sessions: pages cannot be framed by another site, a session
//! ends when its person signs out, and a session of someone who may no
//! longer sign in (taken off `console_users` since) is refused.

mod console_fx;
mod support;

use console_fx::{http_session, setup};
use support::Gateway;

fn csrf_of(html: &str) -> String {
    let at = html.find("name=\"csrf-token\" content=\"").expect("a csrf meta tag") + 27;
    html[at..].split('"').next().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_end_on_sign_out_and_when_their_person_may_no_longer_sign_in() {
    let mut s = setup().await;
    let http = reqwest::Client::new();
    let cookie = http_session(&s.gw, &s.base, "cli:viewer").await;
    let page = http
        .get(format!("{}/console", s.base))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    let headers = page.headers().clone();
    let csp = headers["content-security-policy"].to_str().unwrap();
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    assert_eq!(headers["x-frame-options"], "DENY");
    assert_eq!(headers["referrer-policy"], "no-referrer");
    let html = page.text().await.unwrap();
    assert!(html.contains("Sign out"), "the page offers signing out");
    let csrf = csrf_of(&html);
    // A page's live updates are open while the person signs out.
    let mut events = http
        .get(format!("{}/console/events", s.base))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(events.status(), 200);

    // Signing out needs the page's token, then ends the session.
    let out = format!("{}/console/signout", s.base);
    let r = http.post(&out).header("cookie", &cookie).send().await.unwrap();
    assert_eq!(r.status(), 403);
    let r = http
        .post(&out)
        .header("cookie", &cookie)
        .header("x-csrf-token", &csrf)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers()["set-cookie"].to_str().unwrap().contains("Max-Age=0"));
    let after = http
        .get(format!("{}/console", s.base))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(after.status(), 401, "the session ended");
    // ...and its open event stream with it (checked every 3 s).
    let ended = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        while let Ok(Some(_)) = events.chunk().await {}
    })
    .await;
    assert!(ended.is_ok(), "the event stream outlived its session");

    // Signed in again, then taken off console_users (a restart applies it).
    let cookie = http_session(&s.gw, &s.base, "cli:viewer").await;
    s.gw.kill();
    let config = std::fs::read_to_string(s.sandbox.config_path()).unwrap();
    let without = config.replacen("console_users = [\"cli:viewer\"]\n", "", 1);
    assert_ne!(config, without);
    std::fs::write(s.sandbox.config_path(), without).unwrap();
    let port: u16 = s.base.rsplit(':').next().unwrap().parse().unwrap();
    s.gw = Gateway::start(&s.sandbox, port, "team").await;
    let refused = http
        .get(format!("{}/console", s.base))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401, "cli:viewer may no longer sign in");
    assert!(s.gw.log().contains("may no longer sign in"), "{}", s.gw.log());
}
