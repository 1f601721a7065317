//! `switchboard migrate` from homes written as OpenClaw and Hermes Agent
//! document their files (tests/fixtures/migrate/): the plan names every
//! setting mapped, left out (with why) or secret (redacted); `--dry-run`
//! writes nothing; secrets are imported only with `--secrets`; an existing
//! file is never replaced; the source is left as it was; and the result
//! passes `check` and answers an imported allowed person's DM on the
//! Telegram stand-in with the imported token.

mod support;

use std::path::{Path, PathBuf};
use support::{Gateway, Sandbox, free_port};
use switchboard_test_support::telegram::{FakeTelegram, private_chat, user};
use switchboard_test_support::{ScriptedModel, Step};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/migrate")
        .join(name)
}

/// Every file under `dir` with its bytes (to see that nothing changed).
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                pending.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

fn migrate(sandbox: &Sandbox, args: &[&str]) -> (i32, String) {
    let (code, out, err) = sandbox.run(&[&["migrate"], args].concat());
    (code, format!("{out}{err}"))
}

/// Run what was written, with the stand-ins' addresses put in, and have
/// `person` (on the imported allow list) write to the bot.
async fn answers_a_dm(sandbox: &Sandbox, written: &str, model_line: &str, person: i64) {
    let model = ScriptedModel::start().await;
    let tg = FakeTelegram::start().await;
    let token = std::fs::read_to_string(sandbox.path().join("migrated.env")).unwrap();
    let token = token
        .lines()
        .find_map(|l| l.strip_prefix("TELEGRAM_BOT_TOKEN="))
        .unwrap()
        .to_string();
    tg.only_token(&token);
    assert!(written.contains(model_line), "{written}");
    let config = written
        .replacen(model_line, &format!("base_url = \"{}\"", model.url()), 1)
        .replacen(
            "[channels.telegram.main]\n",
            &format!("[channels.telegram.main]\napi_url = \"{}\"\n", tg.url()),
            1,
        )
        + "\n[channels.local.probe]\nallowed_users = []\n";
    std::fs::write(sandbox.path().join("migrated.toml"), config).unwrap();
    std::fs::copy(sandbox.path().join("migrated.toml"), sandbox.config_path()).unwrap();
    let _gw = Gateway::start(sandbox, free_port(), "probe").await;
    model.push(Step::text("Hello again."));
    tg.message(private_chat(person, "Ann"), user(person, "Ann"), "hi", None, None);
    let to_ann = tg.wait_sent_to(person, 1, 30).await;
    assert_eq!(to_ann[0]["text"], "Hello again.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_openclaw_home_moves_over_with_a_plan_first() {
    let home = fixture("openclaw");
    let before = snapshot(&home);
    let sandbox = Sandbox::new("");
    let from = home.to_str().unwrap();

    let (code, plan) = migrate(&sandbox, &["openclaw", "--from", from, "--dry-run"]);
    assert_eq!(code, 0, "{plan}");
    for line in [
        "agents.defaults.model (local-vllm/qwen3-32b) → [providers.local-vllm] model qwen3-32b",
        "channels.telegram.dmPolicy + allowFrom → allowed_users with \"paired\"",
        "commands.ownerAllowFrom → approvers on telegram.main",
        "mcp.servers.context7 → [mcp_servers.context7] (uvx), every tool at risk high",
        "tools.exec (ask) → [risk_profiles.migrated] level supervised",
        "channels.telegram.botToken → env:TELEGRAM_BOT_TOKEN = (12 characters, redacted)",
        "browser.enabled: no Switchboard equivalent this migration knows",
        "agents.defaults.heartbeat.every: no Switchboard equivalent",
        "workspace/skills/release-notes → workspace/main/skills/release-notes",
        "agents.defaults.model.fallbacks[0] (anthropic/claude-sonnet-4-5) → [providers.anthropic] model claude-sonnet-4-5",
        "fallback models → [providers.local-vllm].fallbacks = [\"anthropic\"]",
        "exec-approvals.json agents.main.allowlist[0] → allowed_commands: rg (approved always)",
        "exec-approvals.json agents.main.allowlist[1]: 'git' is approved only with certain arguments",
        "exec-approvals.json agents.main.allowlist[2]: '/opt/tools/*' is a pattern, not a command name",
        "channels.telegram.groupAllowFrom (333): allowed_users is one list for direct chats and groups",
        "channels.telegram.groups.-1001234567890: rules for one group",
        "agents (research): only the default agent is migrated",
        "exec-approvals.json agents.research.allowlist: not the default agent's",
        "--dry-run: nothing was written.",
    ] {
        assert!(plan.contains(line), "{line:?} in the plan:\n{plan}");
    }
    assert!(
        !plan.contains("123:MIGRATED") && !plan.contains("vllm-secret-key"),
        "secrets are redacted:\n{plan}"
    );
    assert!(!sandbox.path().join("migrated.toml").exists() && !sandbox.path().join("workspace").exists());

    let (code, out) = migrate(
        &sandbox,
        &["openclaw", "--from", from, "--yes", "--out", "migrated.toml"],
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Secrets are not imported without --secrets"), "{out}");
    assert!(
        !sandbox.path().join("migrated.env").exists(),
        "no secrets without --secrets"
    );
    let (code, out) = migrate(
        &sandbox,
        &["openclaw", "--from", from, "--yes", "--out", "migrated.toml"],
    );
    assert_eq!(code, 2, "an existing file is never replaced: {out}");

    assert!(out.contains("migrated.toml exists"), "{out}");
    let (code, out) = migrate(&sandbox, &["openclaw", "--from", from, "--yes", "--out", "second.toml"]);
    assert_eq!(code, 2, "never copied into a workspace that exists: {out}");
    assert!(out.contains("workspace/main exists"), "{out}");
    std::fs::remove_file(sandbox.path().join("migrated.toml")).unwrap();
    std::fs::remove_dir_all(sandbox.path().join("workspace")).unwrap();
    let (code, out) = migrate(
        &sandbox,
        &[
            "openclaw",
            "--from",
            from,
            "--yes",
            "--secrets",
            "--out",
            "migrated.toml",
        ],
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("✓ switchboard check accepts migrated.toml"), "{out}");
    let written = std::fs::read_to_string(sandbox.path().join("migrated.toml")).unwrap();
    assert!(
        !written.contains("123:MIGRATED"),
        "the token is in the secrets file only:\n{written}"
    );
    assert!(
        written.contains("You are Samantha, calm and brief."),
        "the persona is the system prompt"
    );
    assert!(
        written.contains("allowed_users = [\"paired\", \"tg:111\", \"tg:222\"]"),
        "group-only ids are not let into direct chats: {written}"
    );
    assert!(
        written.contains("allowed_commands = [\"jq\", \"ls\", \"rg\"]"),
        "{written}"
    );
    let skill = sandbox.path().join("workspace/main/skills/weather/SKILL.md");
    assert!(skill.is_file() && sandbox.path().join("workspace/main/memory/MEMORY.md").is_file());
    assert_eq!(snapshot(&home), before, "the source is left as it was");

    answers_a_dm(&sandbox, &written, "base_url = \"http://127.0.0.1:8000/v1\"", 111).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hermes_home_moves_over_with_its_env_allow_list() {
    let home = fixture("hermes");
    let before = snapshot(&home);
    let sandbox = Sandbox::new("");
    let from = home.to_str().unwrap();
    let (code, out) = migrate(
        &sandbox,
        &["hermes", "--from", from, "--yes", "--secrets", "--out", "migrated.toml"],
    );
    assert_eq!(code, 0, "{out}");
    for line in [
        "model (custom:local, qwen2.5-coder) → [providers.local] model qwen2.5-coder",
        "TELEGRAM_BOT_TOKEN → env:TELEGRAM_BOT_TOKEN = (10 characters, redacted)",
        "command_allowlist: Hermes's always-approved dangerous patterns (rm) have no equivalent",
        "terminal.backend: no Switchboard equivalent this migration knows",
        "pairing: no approver was found",
        "skills/devops/deploy-check → workspace/main/skills/deploy-check",
        "fallback_providers[0] (openrouter, anthropic/claude-sonnet-4) → [providers.openrouter] model anthropic/claude-sonnet-4",
        "fallback models → [providers.local].fallbacks = [\"openrouter\"]",
    ] {
        assert!(out.contains(line), "{line:?} in:\n{out}");
    }
    let written = std::fs::read_to_string(sandbox.path().join("migrated.toml")).unwrap();
    assert!(
        written.contains("Your notes from before are in memory/MEMORY.md"),
        "{written}"
    );
    assert_eq!(snapshot(&home), before, "the source is left as it was");
    answers_a_dm(&sandbox, &written, "base_url = \"http://127.0.0.1:8080/v1\"", 222).await;
}

/// A source home is read, never trusted: links in it (to files the agent
/// must not read) are not copied into the agent's workspace.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_in_a_source_home_are_not_followed() {
    let home = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "THE-SECRET").unwrap();
    std::fs::create_dir_all(outside.path().join("evil")).unwrap();
    std::fs::write(
        outside.path().join("evil/SKILL.md"),
        "---\nname: evil\ndescription: Outside.\n---\nx\n",
    )
    .unwrap();
    let h = home.path();
    std::fs::write(
        h.join("openclaw.json"),
        "{ agents: { defaults: { model: 'ollama/qwen2.5:7b' } } }",
    )
    .unwrap();
    std::fs::create_dir_all(h.join("workspace/skills/ok")).unwrap();
    std::fs::write(
        h.join("workspace/skills/ok/SKILL.md"),
        "---\nname: ok\ndescription: Fine.\n---\nx\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.txt"),
        h.join("workspace/skills/ok/leak.txt"),
    )
    .unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), h.join("workspace/MEMORY.md")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), h.join("workspace/SOUL.md")).unwrap();
    std::os::unix::fs::symlink(outside.path(), h.join("skills")).unwrap();
    let sandbox = Sandbox::new("");
    let (code, out) = migrate(
        &sandbox,
        &[
            "openclaw",
            "--from",
            h.to_str().unwrap(),
            "--yes",
            "--out",
            "migrated.toml",
        ],
    );
    assert_eq!(code, 0, "{out}");
    let ws = sandbox.path().join("workspace/main");
    assert!(ws.join("skills/ok/SKILL.md").is_file(), "{out}");
    assert!(!ws.join("skills/ok/leak.txt").exists(), "a linked file is not copied");
    assert!(
        !ws.join("memory/MEMORY.md").exists(),
        "a linked memory file is not copied"
    );
    let copied: Vec<_> = std::fs::read_dir(ws.join("skills"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(copied, ["ok"], "a linked skills folder is not read");
    let written = std::fs::read_to_string(sandbox.path().join("migrated.toml")).unwrap();
    assert!(
        !written.contains("THE-SECRET"),
        "a linked persona file is not read:\n{written}"
    );
}
