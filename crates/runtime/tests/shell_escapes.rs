//! The command allowlist cannot be escaped: each way a permitted program
//! could be made to start another one is tried through the real tool loop
//! (a model asking for the calls), under a `full` profile that runs
//! allowed commands without asking. The marker file the smuggled program
//! would create never appears.

mod common;

use common::*;
use serde_json::json;
use std::sync::Arc;
use switchboard_runtime::NoApprover;
use switchboard_test_support::{ScriptedModel, Step};

const PROFILE: &str = r#"
[agents.main]
model_provider = "primary"

[risk_profiles.default]
level = "full"
allowed_commands = ["ls", "git", "env", "xargs", "find", "sort", "cat", "echo"]
"#;

/// Run the model's `calls` in one turn; the tool results, in order.
async fn run(calls: Vec<(&str, serde_json::Value)>, setup: impl FnOnce(&std::path::Path)) -> (Vec<String>, Harness) {
    let model = ScriptedModel::start().await;
    for (tool, args) in calls {
        model.push(Step::tool_call(tool, args));
    }
    model.push(Step::text("done"));
    let h = harness(&format!("{}{PROFILE}", provider("primary", &model.url(), ""))).await;
    std::fs::create_dir_all(h.workspace("main")).unwrap();
    setup(&h.workspace("main"));
    h.turn("go", Arc::new(NoApprover("none".into()))).await.unwrap();
    let reqs = model.requests();
    (tool_results(reqs.last().unwrap()), h)
}

fn pwned(h: &Harness) -> bool {
    h.workspace("main").join("pwned").exists()
}

fn shell(cmd: &str) -> (&'static str, serde_json::Value) {
    ("shell", json!({ "command": cmd }))
}

fn write(path: &str, content: &str) -> (&'static str, serde_json::Value) {
    ("file_write", json!({ "path": path, "content": content }))
}

#[tokio::test]
async fn a_gitconfig_in_the_workspace_does_not_configure_git() {
    let (results, h) = run(
        vec![
            write(".gitconfig", "[diff]\n\texternal = sh -c 'touch pwned'\n"),
            write("a.txt", "one\n"),
            write("b.txt", "two\n"),
            shell("git diff --no-index a.txt b.txt"),
        ],
        |_| {},
    )
    .await;
    assert!(!pwned(&h), "diff.external from $HOME/.gitconfig ran: {results:?}");
    assert!(results[3].contains("-one"), "git diff itself still works: {results:?}");
}

#[tokio::test]
async fn the_repository_config_is_out_of_the_tools_reach() {
    let (results, h) = run(
        vec![
            shell("git init -q"),
            write(".git/config", "[core]\n\tfsmonitor = touch pwned\n"),
            write("sub/../.git/hooks/post-checkout", "#!/bin/sh\ntouch pwned\n"),
            shell("git status"),
        ],
        |_| {},
    )
    .await;
    assert!(!pwned(&h), "{results:?}");
    assert!(results[1].contains(".git"), "{results:?}");
    assert!(results[2].contains(".git"), "{results:?}");
}

#[tokio::test]
async fn git_options_that_run_programs_or_leave_the_workspace_are_refused() {
    let (results, h) = run(
        vec![
            shell("git -c diff.external='sh -c \"touch pwned\"' diff --no-index a.txt b.txt"),
            shell("git --config-env=diff.external=X diff"),
            shell("git -c alias.st='!touch pwned' st"),
            shell("git --exec-path=/tmp status"),
            shell("git -C /tmp status"),
            shell("git st"),
        ],
        |ws| {
            std::fs::write(ws.join("a.txt"), "one\n").unwrap();
            std::fs::write(ws.join("b.txt"), "two\n").unwrap();
        },
    )
    .await;
    assert!(!pwned(&h), "{results:?}");
    for r in &results {
        assert!(r.starts_with("Error:"), "{results:?}");
    }
}

#[tokio::test]
async fn only_the_named_program_from_the_fixed_path_runs() {
    let outside = tempfile::tempdir().unwrap();
    let fake_ls = outside.path().join("ls");
    std::fs::write(&fake_ls, "#!/bin/sh\ntouch pwned\n").unwrap();
    std::fs::set_permissions(&fake_ls, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let fake = fake_ls.display().to_string();
    let (results, h) = run(vec![shell(&fake), shell("./ls"), shell("ls")], |ws| {
        std::fs::copy(&fake_ls, ws.join("ls")).unwrap();
        std::fs::set_permissions(ws.join("ls"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    })
    .await;
    assert!(!pwned(&h), "{results:?}");
    assert!(results[0].contains("by name"), "{results:?}");
    assert!(results[1].contains("by name"), "{results:?}");
    assert!(!results[2].starts_with("Error:"), "plain ls runs: {results:?}");
}

#[tokio::test]
async fn programs_that_launch_other_programs_are_high_risk() {
    let (results, h) = run(
        vec![
            shell("env touch pwned"),
            shell("xargs -a list touch"),
            shell("find . -name list -exec touch pwned ;"),
            shell("find . -name list -execdir touch pwned ;"),
            shell("find . -name list -ok touch pwned ;"),
            shell("sort --compress-program=./evil list"),
            shell("env"),
        ],
        |ws| std::fs::write(ws.join("list"), "pwned\n").unwrap(),
    )
    .await;
    assert!(!pwned(&h), "{results:?}");
    for r in &results[..6] {
        assert!(r.contains("high-risk commands are blocked"), "{results:?}");
    }
    assert!(!results[6].starts_with("Error:"), "env alone only prints: {results:?}");
}
