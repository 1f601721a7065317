//! The operator console (docs/console.md) in a real headless Chromium,
//! through `switchboard run` with local channels and scripted models:
//! sign-in by one-time link, the live run tree, approvals decided from the
//! page, refusals (non-approvers, missing CSRF token, foreign Host), kill
//! cascades, costs equal to the ledger, and screenshots at desktop and
//! phone sizes.

mod console_fx;
mod support;

use console_fx::{ask_console, browser_available, link_for, page_post, screenshots, setup, sign_in, tree_has};
use serde_json::{Value, json};
use std::time::Duration;
use switchboard_test_support::browser::Browser;
use switchboard_test_support::{Step, tool_results};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_in_once_then_approve_from_the_page_while_others_are_refused() {
    if !browser_available() {
        return;
    }
    let s = setup().await;
    let shots = s.sandbox.path().join("screenshots");

    // Only in a direct chat, and only for approvers and console users.
    let group = ask_console(&s.gw, "cli:alice", "desk-room", false).await;
    assert!(
        group["text"].as_str().unwrap().contains("sent only in a direct chat"),
        "{group}"
    );
    let mut ops = 0;
    // Where anyone on the machine could claim a name, no links at all.
    let mut team = 0;
    s.gw.send("team", "dm-alice", "cli:alice", "/console", false, true)
        .await;
    let claimed = s.gw.wait_for("team", &mut team, 20, |e| e["kind"] == "message").await;
    assert!(
        claimed["text"]
            .as_str()
            .unwrap()
            .starts_with("Console links are not given in this local chat"),
        "{claimed}"
    );
    let refused = ask_console(&s.gw, "cli:bob", "dm-bob", true).await;
    assert!(
        refused["text"]
            .as_str()
            .unwrap()
            .starts_with("cli:bob may not use the operator console"),
        "{refused}"
    );

    // The link signs in once.
    let link = link_for(&s.gw, "cli:alice").await;
    assert!(link.starts_with(&format!("{}/console/signin#", s.base)), "{link}");
    let alice = Browser::launch().await.unwrap();
    let landed = sign_in(&alice, &link).await;
    assert!(
        landed.starts_with("/console ") && landed.contains("cli:alice"),
        "{landed}"
    );
    let again = Browser::launch().await.unwrap();
    let second = sign_in(&again, &link).await;
    assert!(second.contains("used already or has expired"), "{second}");
    assert_eq!(again.eval("document.cookie").await.unwrap(), json!(""));
    drop(again);

    // A tool call waits for approval; it shows on the page with buttons.
    s.main.push(Step::tool_call(
        "file_write",
        json!({"path": "notes.txt", "content": "ship it"}),
    ));
    s.main
        .push(Step::text("Written.").when(|r| !tool_results(r).is_empty()));
    s.gw.send("team", "general", "cli:bob", "@bot write the notes", true, false)
        .await;
    let prompt =
        s.gw.wait_for("ops", &mut ops, 20, |e| e["kind"] == "approval_prompt")
            .await;
    let id = prompt["approval_id"].as_str().unwrap().to_string();
    alice.goto(&format!("{}/console/approvals", s.base)).await.unwrap();
    let once = format!("[data-approval=\"{id}\"] button.decide.once");
    alice
        .wait_for(&format!("!!document.querySelector('{once}')"), 10)
        .await
        .unwrap();
    for (part, expected) in [(".summary", "notes.txt"), (".meta", "asked by cli:bob")] {
        let shown = alice
            .eval(&format!(
                "document.querySelector('[data-approval=\"{id}\"] {part}').innerText"
            ))
            .await
            .unwrap();
        assert!(shown.as_str().unwrap().contains(expected), "{part}: {shown}");
    }
    screenshots(&alice, &shots, "approvals").await;

    // Someone allowed into the console but not an approver sees no
    // buttons, and a POST they forge is refused.
    let viewer = Browser::launch().await.unwrap();
    let viewer_link = link_for(&s.gw, "cli:viewer").await;
    sign_in(&viewer, &viewer_link).await;
    viewer.goto(&format!("{}/console/approvals", s.base)).await.unwrap();
    viewer
        .wait_for(&format!("!!document.querySelector('[data-approval=\"{id}\"]')"), 10)
        .await
        .unwrap();
    assert_eq!(
        viewer
            .eval("document.querySelectorAll('button.decide').length")
            .await
            .unwrap(),
        json!(0)
    );
    let (status, text) = page_post(&viewer, &format!("/console/approvals/{id}/decide"), "once", true).await;
    assert_eq!(status, 403, "{text}");
    assert!(text.contains("cli:viewer may not decide approval"), "{text}");
    // Without the CSRF token, even an approver is refused.
    let (status, text) = page_post(&alice, &format!("/console/approvals/{id}/decide"), "once", false).await;
    assert_eq!(status, 403, "{text}");
    assert!(text.contains("CSRF"), "{text}");
    // With the session cookie but another Host (a rebinding page), refused.
    let cookies = alice
        .call("Network.getCookies", json!({"urls": [format!("{}/console", s.base)]}))
        .await
        .unwrap();
    let cookie = cookies["cookies"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "sb_console")
        .expect("session cookie");
    assert_eq!(
        (cookie["httpOnly"].as_bool(), cookie["sameSite"].as_str()),
        (Some(true), Some("Strict"))
    );
    let foreign = reqwest::Client::new()
        .get(format!("{}/console/approvals", s.base))
        .header("Host", "evil.example:80")
        .header("Cookie", format!("sb_console={}", cookie["value"].as_str().unwrap()))
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status().as_u16(), 403);
    assert!(
        s.main.requests().iter().all(|r| tool_results(r).is_empty()),
        "nothing ran before the decision"
    );

    // The approver allows it from the page: the tool runs, the chat
    // prompt is edited, the audit says it came from the console.
    alice.click(&once).await.unwrap();
    alice
        .wait_for("(document.body.dataset.lastAction || '').startsWith('200')", 10)
        .await
        .unwrap();
    let edit = s.gw.wait_for("ops", &mut ops, 20, |e| e["kind"] == "edit").await;
    assert!(edit["text"].as_str().unwrap().contains("cli:alice"), "{edit}");
    let done = s.gw.wait_for("team", &mut team, 20, |e| e["kind"] == "message").await;
    assert_eq!(done["text"], "Written.");
    let results: Vec<String> = s.main.requests().iter().flat_map(tool_results).collect();
    assert!(results.iter().any(|r| r.contains("notes.txt")), "{results:?}");
    alice.goto(&format!("{}/console/approvals", s.base)).await.unwrap();
    let row = alice
        .eval(&format!(
            "document.querySelector('tr[data-approval=\"{id}\"]').innerText"
        ))
        .await
        .unwrap();
    let row = row.as_str().unwrap();
    assert!(
        row.contains("approved") && row.contains("cli:alice") && row.contains("console"),
        "{row}"
    );
    assert_eq!(
        alice
            .eval("document.querySelectorAll('ul.pending > li').length")
            .await
            .unwrap(),
        json!(0)
    );

    // Every page renders for both sizes.
    for (path, name) in [
        ("/console", "runs"),
        ("/console/costs", "costs"),
        ("/console/health", "health"),
    ] {
        alice.goto(&format!("{}{path}", s.base)).await.unwrap();
        screenshots(&alice, &shots, name).await;
    }
    let health = alice
        .eval("document.querySelector('tr[data-channel=\"local.desk\"] .state').innerText")
        .await
        .unwrap();
    assert_eq!(health, json!("connected"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_run_tree_updates_live_kill_cascades_and_costs_match_the_ledger() {
    if !browser_available() {
        return;
    }
    let s = setup().await;
    let alice = Browser::launch().await.unwrap();
    let link = link_for(&s.gw, "cli:alice").await;
    sign_in(&alice, &link).await;
    alice.goto(&format!("{}/console", s.base)).await.unwrap();
    alice.wait_for("document.body.dataset.live === '1'", 10).await.unwrap();
    alice.eval("window.__same_page = 1").await.unwrap();

    // The turn starts a background delegate and a child session, and
    // keeps going for a moment.
    s.main.push(
        Step::tool_call(
            "delegate",
            json!({"agent": "reviewer", "prompt": "review the diff", "background": true}),
        )
        .when_last_contains("start the work"),
    );
    s.main.push(
        Step::tool_call(
            "sessions_spawn",
            json!({"task": "child task: draft notes", "label": "notes"}),
        )
        .when(|r| tool_results(r).len() == 1),
    );
    s.main.push(
        Step::text("Both started.")
            .delay(Duration::from_millis(1500))
            .when(|r| tool_results(r).len() == 2),
    );
    s.main.push(
        Step::text("notes drafted")
            .delay(Duration::from_secs(3))
            .when_last_contains("child task"),
    );
    s.reviewer.push(
        Step::text("diff looks fine")
            .delay(Duration::from_secs(3))
            .usage(2000, 400),
    );
    s.gw.send("team", "general", "cli:bob", "@bot start the work", true, false)
        .await;

    alice
        .wait_for(
            "!!document.querySelector('li.turn[data-status=\"running\"] li.run')",
            15,
        )
        .await
        .unwrap();
    alice.wait_for(&tree_has("delegate", "running"), 15).await.unwrap();
    alice
        .wait_for(&tree_has("sessions_spawn", "running"), 15)
        .await
        .unwrap();
    alice.wait_for(&tree_has("delegate", "done"), 20).await.unwrap();
    alice.wait_for(&tree_has("sessions_spawn", "done"), 20).await.unwrap();
    assert_eq!(
        alice.eval("window.__same_page").await.unwrap(),
        json!(1),
        "updated without a reload"
    );

    // A child session that delegates to a slow reviewer: killing the
    // session from the page stops its delegate too.
    s.main.push(
        Step::tool_call(
            "sessions_spawn",
            json!({"task": "slow task: ask the reviewer", "label": "slow"}),
        )
        .when_last_contains("do the slow thing"),
    );
    s.main
        .push(Step::text("Started the slow one.").when(|r| !tool_results(r).is_empty()));
    s.main.push(
        Step::tool_call("delegate", json!({"agent": "reviewer", "prompt": "very slow review"}))
            .when_last_contains("slow task: ask the reviewer"),
    );
    s.reviewer.push(
        Step::text("too late")
            .delay(Duration::from_secs(60))
            .when_last_contains("very slow review"),
    );
    s.gw.send("team", "general", "cli:bob", "@bot do the slow thing", true, false)
        .await;
    alice.wait_for(&tree_has("delegate", "running"), 20).await.unwrap();
    let session_id = alice
        .wait_for(
            "[...document.querySelectorAll('li.run[data-status=\"running\"]')].filter(li => li.querySelector('.kind').innerText.toLowerCase() === 'sessions_spawn' && li.querySelector('li.run')).map(li => li.dataset.run)[0]",
            20,
        )
        .await
        .unwrap();
    let kill = format!(
        "li.run[data-run=\"{}\"] > .row button.danger",
        session_id.as_str().unwrap()
    );
    alice.click(&kill).await.unwrap();
    alice.click(&kill).await.unwrap();
    alice
        .wait_for(
            "(document.body.dataset.lastAction || '').startsWith('200 Killed 2 run(s)')",
            10,
        )
        .await
        .unwrap();
    // The session and the delegate it started, without a reload.
    for inner in ["", " li.run"] {
        let status = format!(
            "document.querySelector('li.run[data-run=\"{}\"]{inner}').dataset.status === 'cancelled'",
            session_id.as_str().unwrap()
        );
        alice.wait_for(&status, 10).await.unwrap();
    }

    let shots = s.sandbox.path().join("screenshots");
    screenshots(&alice, &shots, "runs").await;

    // The killed session's page: its transcript and progress.
    let session_id = session_id.as_str().unwrap();
    alice
        .goto(&format!("{}/console/runs/{session_id}", s.base))
        .await
        .unwrap();
    assert_eq!(
        alice
            .eval("document.querySelector('dd[data-status]').innerText")
            .await
            .unwrap(),
        json!("cancelled")
    );
    let transcript = alice
        .eval("document.querySelector('ol.transcript').innerText")
        .await
        .unwrap();
    let transcript = transcript.as_str().unwrap();
    assert!(
        transcript.contains("slow task: ask the reviewer") && transcript.contains("→ delegate"),
        "{transcript}"
    );
    let progress = alice
        .eval("JSON.parse(document.querySelector('pre.progress').innerText)")
        .await
        .unwrap();
    assert_eq!(progress["iterations"], json!(1), "{progress}");
    screenshots(&alice, &shots, "run").await;

    // A turn that takes long is stopped from the page, as /stop would.
    s.main.push(
        Step::text("far too late")
            .delay(Duration::from_secs(60))
            .when_last_contains("think slowly"),
    );
    alice.goto(&format!("{}/console", s.base)).await.unwrap();
    alice.wait_for("document.body.dataset.live === '1'", 10).await.unwrap();
    s.gw.send("team", "general", "cli:bob", "@bot think slowly", true, false)
        .await;
    let stop = "li.turn[data-status=\"running\"] button.danger";
    alice
        .wait_for(&format!("!!document.querySelector('{stop}')"), 15)
        .await
        .unwrap();
    alice.click(stop).await.unwrap();
    alice.click(stop).await.unwrap();
    alice
        .wait_for(
            "(document.body.dataset.lastAction || '').startsWith('200 Stopped the turn')",
            10,
        )
        .await
        .unwrap();
    alice.wait_for("!document.querySelector('li.turn')", 15).await.unwrap();

    // Costs equal the ledger the gateway wrote.
    alice.goto(&format!("{}/console/costs", s.base)).await.unwrap();
    let shown = alice
        .eval("Number(document.querySelector('section[data-period=\"today\"] .total').dataset.micros)")
        .await
        .unwrap();
    let store = switchboard_store::Store::open(&format!(
        "sqlite://{}/data/control_plane.db",
        s.sandbox.path().display()
    ))
    .await
    .unwrap();
    let day = switchboard_store::utc_day(switchboard_store::now_ms());
    let ledger = store.costs().total(&day).await.unwrap();
    assert!(ledger.cost_micros > 0, "prices are configured, so calls cost something");
    assert_eq!(shown.as_i64(), Some(ledger.cost_micros));
    let per_agent: i64 = alice
        .eval("[...document.querySelectorAll('section[data-period=\"today\"] td.own')].reduce((a, td) => a + Number(td.dataset.micros), 0)")
        .await
        .unwrap()
        .as_i64()
        .unwrap();
    assert_eq!(per_agent, ledger.cost_micros);
    let reviewer: Value = alice
        .eval("!!document.querySelector('section[data-period=\"month\"] tr[data-provider=\"prev\"]')")
        .await
        .unwrap();
    assert_eq!(reviewer, json!(true), "the reviewer's provider is listed");
}
