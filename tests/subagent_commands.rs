//! `/subagents` from a chat, through `switchboard run` and a local team
//! chat: list and info read the run registry, kill stops a hanging child
//! and its children at once, pause refuses new delegations.

mod support;

use serde_json::{Value, json};
use std::time::{Duration, Instant};
use support::{Gateway, Sandbox, free_port, team_with_reviewer};
use switchboard_test_support::{ScriptedModel, Step};

const ROUTE: &str = r#"[risk_profiles.default.approval_route]
approver_channel = "local.team"
approver_recipient = "ops"
approvers = ["cli:alice"]"#;

struct Fx {
    main: ScriptedModel,
    reviewer: ScriptedModel,
    gw: Gateway,
    cursor: u64,
    _sandbox: Sandbox,
}

impl Fx {
    async fn new() -> Self {
        let (main, reviewer) = (ScriptedModel::start().await, ScriptedModel::start().await);
        let port = free_port();
        let sandbox = Sandbox::new(&team_with_reviewer(&main.url(), &reviewer.url(), port, ROUTE));
        let gw = Gateway::start(&sandbox, port, "team").await;
        Self {
            main,
            reviewer,
            gw,
            cursor: 0,
            _sandbox: sandbox,
        }
    }

    /// `user` says `text` in the team chat; returns the bot's next message
    /// (announcements, which may arrive at any time, are skipped).
    async fn say(&mut self, user: &str, text: &str) -> String {
        self.gw.send("team", "general", user, text, true, false).await;
        let e: Value = self
            .gw
            .wait_for("team", &mut self.cursor, 20, |e| {
                e["kind"] == "message" && !e["text"].as_str().unwrap_or("").starts_with("Status: ")
            })
            .await;
        e["text"].as_str().unwrap().to_string()
    }

    /// Until cli:bob's `/subagents list` shows `line` (10 s at most).
    async fn wait_listed(&mut self, line: &str) {
        let t = Instant::now();
        loop {
            let list = self.say("cli:bob", "/subagents list").await;
            if list.contains(line) {
                return;
            }
            assert!(t.elapsed() < Duration::from_secs(10), "{list}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_info_and_kill_with_cascade() {
    let mut f = Fx::new().await;
    f.main.push(Step::tool_call(
        "delegate",
        json!({"agent": "reviewer", "prompt": "deep audit", "background": true}),
    ));
    f.main.push(Step::text("Started the audit."));
    // The reviewer spawns a helper whose model call hangs.
    f.reviewer
        .push(Step::tool_call("spawn_subagent", json!({"prompt": "helper work"})).when_last_contains("deep audit"));
    f.reviewer.push(
        Step::text("never")
            .when_last_contains("helper work")
            .delay(Duration::from_secs(60)),
    );
    assert_eq!(
        f.say("cli:bob", "@bot audit in the background").await,
        "Started the audit."
    );
    // Wait until the helper's model call is in flight.
    let t = Instant::now();
    while f.reviewer.requests().len() < 2 || f.reviewer.in_flight() == 0 {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "the helper never called its model"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let list = f.say("cli:bob", "/subagents list").await;
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(lines[0], "Subagents of this chat (active and last 30 min):", "{list}");
    assert_eq!(lines.len(), 3, "{list}");
    assert!(
        lines[1].starts_with("#1 ") && lines[1].contains(" • background • reviewer • prev-model • "),
        "{list}"
    );
    assert!(lines[1].ends_with(" • running • deep audit"), "{list}");
    assert!(
        lines[2].starts_with("#2 ")
            && lines[2].contains(" • reviewer • ")
            && lines[2].ends_with(" • running • helper work"),
        "{list}"
    );

    let info = f.say("cli:bob", "/subagents info #1").await;
    assert!(info.contains("status: running\n"), "{info}");
    assert!(info.contains("agent: reviewer (delegate)\n"), "{info}");
    assert!(info.contains("session key: agent:reviewer:delegate:"), "{info}");
    // Times people can read, and where the transcript is.
    assert!(
        info.contains("transcript: /subagents log #1 (add tools for tool calls)\n"),
        "{info}"
    );
    let created = info.lines().find(|l| l.starts_with("created: ")).unwrap_or_default();
    assert!(created.ends_with(" s ago)") || created.ends_with("just now)"), "{info}");
    assert!(created.contains(" UTC ("), "{info}");
    assert!(info.contains("ended: -\n"), "{info}");
    let helper_info = f.say("cli:bob", "/subagents info 2").await;
    assert!(
        helper_info.contains("agent: reviewer (spawn_subagent)"),
        "{helper_info}"
    );
    assert!(helper_info.contains("depth: 2"), "{helper_info}");

    // Someone else (not an approver) may not kill bob's run.
    let refused = f.say("cli:carol", "/subagents kill #1").await;
    assert!(refused.starts_with("cli:carol may not kill run "), "{refused}");

    let killed_at = Instant::now();
    let killed = f.say("cli:bob", "/subagents kill #1").await;
    assert!(killed.starts_with("Killed 2 run(s): "), "{killed}");
    while f.reviewer.in_flight() > 0 {
        assert!(
            killed_at.elapsed() < Duration::from_secs(1),
            "the hanging model call was not cut within 1 s"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let after = f.say("cli:bob", "/subagents list").await;
    assert!(
        after.contains(" • cancelled • deep audit") && after.contains(" • cancelled • helper work"),
        "{after}"
    );
    // The killed background task is announced, saying who stopped it.
    let t = Instant::now();
    loop {
        let all = f.gw.events("team", 0).await;
        if let Some(a) = all
            .iter()
            .find(|e| e["text"].as_str().unwrap_or("").starts_with("Status: error"))
        {
            assert!(
                a["text"]
                    .as_str()
                    .unwrap()
                    .contains("Notes: killed by cli:bob; run cancelled"),
                "{a}"
            );
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "no announcement of the killed task"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let log = f.say("cli:bob", "/subagents log #1 tools").await;
    assert!(
        log.contains("[user] deep audit") && log.contains("[tool call] spawn_subagent"),
        "{log}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pause_refuses_new_delegations_until_resumed() {
    let mut f = Fx::new().await;
    assert!(
        f.say("cli:bob", "/subagents pause")
            .await
            .starts_with("cli:bob may not pause")
    );
    assert!(
        f.say("cli:alice", "/subagents pause")
            .await
            .starts_with("Delegation spawning is paused")
    );
    f.main
        .push(Step::tool_call("delegate", json!({"agent": "reviewer", "prompt": "x"})));
    f.main.push(Step::text("refused").when_last_contains("paused"));
    assert_eq!(f.say("cli:bob", "@bot delegate something").await, "refused");
    let reqs = f.main.requests();
    let result = reqs.last().unwrap()["messages"].as_array().unwrap().last().unwrap()["content"].clone();
    assert_eq!(
        result,
        "Error: Delegation spawning is paused. Resume it with /subagents resume before retrying."
    );
    assert!(
        f.say("cli:bob", "/subagents resume all")
            .await
            .starts_with("cli:bob may not pause or resume delegation for every agent")
    );
    assert_eq!(
        f.say("cli:alice", "/subagents resume").await,
        "Delegation spawning resumed for main."
    );
    // Lifting one agent's pause under a pause of every agent says so.
    assert!(
        f.say("cli:alice", "/subagents pause all")
            .await
            .starts_with("Delegation spawning is paused for every agent")
    );
    let told = f.say("cli:alice", "/subagents resume").await;
    assert!(told.contains("stays paused for every agent"), "{told}");
    assert_eq!(
        f.say("cli:alice", "/subagents resume all").await,
        "Delegation spawning resumed for every agent."
    );
    f.main
        .push(Step::tool_call("delegate", json!({"agent": "reviewer", "prompt": "y"})));
    f.reviewer.push(Step::text("done y"));
    f.main.push(Step::text("delegated").when_last_contains("done y"));
    assert_eq!(f.say("cli:bob", "@bot delegate again").await, "delegated");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_ends_the_turn_and_the_child_sessions_it_started() {
    let mut f = Fx::new().await;
    f.main.push(Step::tool_call(
        "sessions_spawn",
        json!({"task": "endless helper", "agentId": "main"}),
    ));
    f.main.push(
        Step::text("hangs")
            .when_last_contains("endless helper")
            .delay(Duration::from_secs(60)),
    );
    f.main
        .push(Step::text("Helper started.").when_last_contains("accepted"));
    assert_eq!(f.say("cli:bob", "@bot start a helper").await, "Helper started.");
    let t = Instant::now();
    while f.main.requests().len() < 3 || f.main.in_flight() == 0 {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "the helper never called its model"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The turn has ended; bob's /stop stops the child he asked for.
    assert_eq!(
        f.say("cli:bob", "/stop").await,
        "Stopping 1 child session(s) you started."
    );
    let stopped = Instant::now();
    while f.main.in_flight() > 0 {
        assert!(
            stopped.elapsed() < Duration::from_secs(1),
            "the child's model call was not cut"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let list = f.say("cli:bob", "/subagents list").await;
    assert!(list.contains(" • cancelled • endless helper"), "{list}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_reaches_a_running_child_and_restarts_a_finished_one() {
    let mut f = Fx::new().await;
    // A running child that works in two steps sees a message sent between them.
    f.main.push(Step::tool_call(
        "sessions_spawn",
        json!({"task": "two-step job", "agentId": "main", "label": "stepper"}),
    ));
    f.main.push(Step::text("Started.").when_last_contains("accepted"));
    f.main.push(
        Step::tool_call("memory_recall", json!({"query": "a"}))
            .when_last_contains("two-step job")
            .delay(Duration::from_millis(400)),
    );
    f.main.push(Step::text("Noted the hint.").when(|r| {
        r.to_string()
            .contains("Message from cli:bob in the chat: use the staging db")
    }));
    f.main
        .push(Step::text("ANNOUNCE_SKIP").when_last_contains("Write the announcement"));
    assert_eq!(f.say("cli:bob", "@bot start the job").await, "Started.");
    let sent = f.say("cli:bob", "/subagents send stepper use the staging db").await;
    assert!(
        sent.ends_with("(running); it sees the message at its next step."),
        "{sent}"
    );
    f.wait_listed(" • completed • two-step job").await;
    // A finished child gets a new turn in its own session.
    f.main
        .push(Step::text("Follow-up answered.").when_last_contains("Message from cli:bob in the chat: one more thing"));
    let answer = f.say("cli:bob", "/subagents send #1 one more thing").await;
    assert!(
        answer.starts_with("main (session of ") && answer.ends_with(")> Follow-up answered."),
        "{answer}"
    );
}

/// `/stop` in the chat also stops the turn `/subagents send` gave a
/// finished child from there (it runs in the child's session, so it was
/// out of /stop's reach and ran on).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_ends_a_follow_up_turn_of_a_finished_child() {
    let mut f = Fx::new().await;
    f.main.push(Step::tool_call(
        "sessions_spawn",
        json!({"task": "quick job", "agentId": "main", "label": "quick"}),
    ));
    f.main.push(Step::text("Started.").when_last_contains("accepted"));
    f.main.push(Step::text("quick result").when_last_contains("quick job"));
    f.main
        .push(Step::text("ANNOUNCE_SKIP").when_last_contains("Write the announcement"));
    assert_eq!(f.say("cli:bob", "@bot start the job").await, "Started.");
    f.wait_listed(" • completed • quick job").await;
    let t = Instant::now();
    f.main.push(
        Step::text("too late")
            .when_last_contains("one slow thing")
            .delay(Duration::from_secs(60)),
    );
    f.gw.send(
        "team",
        "general",
        "cli:bob",
        "/subagents send #1 one slow thing",
        true,
        false,
    )
    .await;
    while f.main.in_flight() == 0 {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "the follow-up never called its model"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    f.gw.send("team", "general", "cli:bob", "/stop", true, false).await;
    f.gw.wait_for("team", &mut f.cursor, 20, |e| e["text"] == "Stopping the current turn.")
        .await;
    let stopped = Instant::now();
    while f.main.in_flight() > 0 {
        assert!(
            stopped.elapsed() < Duration::from_secs(2),
            "the follow-up's model call was not cut"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
