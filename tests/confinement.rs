//! Tools confined by the kernel, tried as an attacker would through
//! `switchboard run`: a prompt-injected agent whose model only calls
//! `file_write` and `shell` (real git, grep, find, tar, sed, awk, python3)
//! under a `full` profile with high-risk commands unblocked. Nothing is
//! created outside the workspace, and nothing from outside reaches the
//! model, whichever layer — argument checks or kernel — stops it.

mod support;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use support::{Gateway, Sandbox};
use switchboard_test_support::{ScriptedModel, Step, tool_results};

const SECRET: &str = "outside-secret-7f3a";

fn profile(network: &str, extra: &str) -> String {
    format!(
        "[risk_profiles.default]\nlevel = \"full\"\nblock_high_risk_commands = false\nnetwork = \"{network}\"\n\
         allowed_commands = [\"git\", \"grep\", \"cat\", \"find\", \"tar\", \"sed\", \"awk\", \"python3\", \"ls\"]\n\
         [runtime_profiles.default]\nmax_tool_iterations = 20\n{extra}"
    )
}

struct Attack {
    model: ScriptedModel,
    sandbox: Sandbox,
    gw: Gateway,
    cursor: std::cell::Cell<u64>,
}

impl Attack {
    async fn start(before: &str, env: &[(&str, &str)]) -> Self {
        let model = ScriptedModel::start().await;
        let port = support::free_port();
        let config = format!(
            "{}{before}[channels.local.team]\nallowed_users = [\"*\"]\n",
            support::main_agent_on(&model.url(), port, "local.team")
        );
        let sandbox = Sandbox::new(&config);
        std::fs::create_dir_all(sandbox.path().join("outside")).unwrap();
        std::fs::write(sandbox.path().join("outside/secret.txt"), format!("{SECRET}\n")).unwrap();
        let gw = Gateway::start_with_env(&sandbox, port, "team", env).await;
        Self {
            model,
            sandbox,
            gw,
            cursor: std::cell::Cell::new(0),
        }
    }

    fn outside(&self) -> PathBuf {
        self.sandbox.path().join("outside")
    }

    /// One turn whose model makes `calls` in order; the tool results and
    /// everything the model received in it.
    async fn turn(&self, calls: Vec<(&str, Value)>) -> (Vec<String>, String) {
        let before = self.model.requests().len();
        for (tool, args) in calls {
            self.model.push(Step::tool_call(tool, args));
        }
        self.model.push(Step::text("done"));
        self.gw.send("team", "c1", "cli:ann", "go", false, true).await;
        let mut cursor = self.cursor.get();
        self.gw
            .wait_for("team", &mut cursor, 60, |e| e["text"].as_str() == Some("done"))
            .await;
        self.cursor.set(cursor);
        let requests = self.model.requests()[before..].to_vec();
        let results = tool_results(requests.last().unwrap());
        (results, serde_json::to_string(&requests).unwrap())
    }

    fn nothing_new_outside(&self) {
        let names: Vec<String> = std::fs::read_dir(self.outside())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["secret.txt"], "something was created outside the workspace");
    }
}

fn shell(cmd: &str) -> (&'static str, Value) {
    ("shell", json!({ "command": cmd }))
}

fn write(path: &str, content: &str) -> (&'static str, Value) {
    ("file_write", json!({ "path": path, "content": content }))
}

/// Refused by the kernel: Landlock (permission denied) or the read-only
/// mounts outside the workspace.
fn kernel_refused(result: &str) -> bool {
    result.contains("Permission denied") || result.contains("Read-only file system")
}

fn gd_config(marker: &Path) -> String {
    format!(
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n[diff]\n\texternal = \"touch {} #\"\n",
        marker.display()
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_separate_git_dir_config_starts_nothing_outside() {
    let a = Attack::start(&profile("none", ""), &[]).await;
    let marker = a.outside().join("x");
    let (results, _) = a
        .turn(vec![
            shell("git init -q --separate-git-dir=gd wt"),
            write("gd/config", &gd_config(&marker)),
            write("wt/a.txt", "one\n"),
            write("wt/b.txt", "two\n"),
            shell("git -C wt diff --no-index a.txt b.txt"),
        ])
        .await;
    a.nothing_new_outside();
    assert!(
        results[4].contains("wt/.git points at a repository outside"),
        "{results:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hand_written_bare_repository_starts_nothing_outside() {
    let a = Attack::start(&profile("none", ""), &[]).await;
    let marker = a.outside().join("bare");
    let config = gd_config(&marker).replace("bare = false", "bare = true");
    let (results, _) = a
        .turn(vec![
            write("r/HEAD", "ref: refs/heads/main\n"),
            write("r/objects/keep", ""),
            write("r/refs/keep", ""),
            write("r/config", &config),
            write("r/a", "one\n"),
            write("r/b", "two\n"),
            shell("git -C r diff --no-index a b"),
        ])
        .await;
    a.nothing_new_outside();
    assert!(
        results[6].contains("-one"),
        "git still diffs, ignoring the bare repository: {results:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn git_apply_cannot_write_or_link_outside() {
    let a = Attack::start(&profile("none", ""), &[]).await;
    let planted = a.outside().join("planted.txt");
    let unsafe_diff = format!("--- /dev/null\n+++ {}\n@@ -0,0 +1 @@\n+planted\n", planted.display());
    let link_diff = format!(
        "diff --git a/s/up b/s/up\nnew file mode 120000\n--- /dev/null\n+++ b/s/up\n@@ -0,0 +1 @@\n+{}\n\\ No newline at end of file\n",
        a.outside().display()
    );
    let (results, seen) = a
        .turn(vec![
            write("p.diff", &unsafe_diff),
            shell("git apply --unsafe-paths -p0 p.diff"),
            write("l.diff", &link_diff),
            shell("git apply l.diff"),
            write("s/empty", ""),
            shell("git -C s diff --no-index up/secret.txt empty"),
            shell("grep -R outside-secret s"),
            shell("git -C s diff --no-index --output=up/x empty ../l.diff"),
            shell("find -L s -name secret.txt"),
            shell("python3 -c \"print(open('s/up/secret.txt').read())\""),
            shell("python3 -c \"open('s/up/written', 'w').write('x')\""),
        ])
        .await;
    a.nothing_new_outside();
    assert!(results[1].contains("--unsafe-paths is refused"), "{results:?}");
    assert!(
        !results[3].starts_with("Error"),
        "the link itself may be made: {results:?}"
    );
    assert!(
        !seen.contains(SECRET),
        "outside content reached the model: {results:#?}"
    );
    // grep -R, find -L and python passed the argument checks: the kernel refused them.
    for i in [6, 8, 9, 10] {
        assert!(kernel_refused(&results[i]), "{i}: {results:#?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn programs_that_run_programs_stay_inside() {
    let a = Attack::start(&profile("none", ""), &[]).await;
    let out = a.outside();
    let (results, seen) = a
        .turn(vec![
            write("a.txt", "one\n"),
            shell(&format!("sed \"1e touch {}/sed\" a.txt", out.display())),
            shell(&format!(
                "awk \"BEGIN {{ system(\\\"touch {}/awk\\\") }}\"",
                out.display()
            )),
            shell("tar -cf a.tar a.txt"),
            shell(&format!("tar \"--to-command=touch {}/tar\" -xf a.tar", out.display())),
            shell(&format!(
                "awk \"BEGIN {{ system(\\\"cat {}/secret.txt\\\") }}\"",
                out.display()
            )),
        ])
        .await;
    a.nothing_new_outside();
    assert!(!seen.contains(SECRET), "{results:#?}");
    // The words passed the argument checks: the kernel refused each one.
    for i in [1, 2, 4, 5] {
        assert!(kernel_refused(&results[i]), "{i}: {results:#?}");
    }
}

const SOCKETS: &str = "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(); socket.create_connection(s.getsockname(), timeout=2); print('own-loopback-ok')";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_network_is_what_the_risk_profile_allows() {
    let none = Attack::start(&profile("none", ""), &[]).await;
    let cmd = format!("python3 -c \"{SOCKETS}\"");
    let (results, _) = none.turn(vec![shell(&cmd)]).await;
    assert!(!results[0].contains("own-loopback-ok"), "{results:?}");
    let loopback = Attack::start(&profile("loopback", ""), &[]).await;
    let (results, _) = loopback.turn(vec![shell(&cmd)]).await;
    assert!(results[0].contains("own-loopback-ok"), "{results:?}");
}

const FORKS: &str = "import os, time\nn = 0\ntry:\n    for _ in range(500):\n        if os.fork() == 0:\n            os.close(1); os.close(2); time.sleep(20); os._exit(0)\n        n += 1\nexcept OSError:\n    pass\nprint(\"forked\", n)\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_bomb_is_bounded_and_the_gateway_environment_is_out_of_reach() {
    let a = Attack::start(
        &profile("none", "[sandbox]\nmax_processes = 16\n"),
        &[("SB_GATEWAY_SECRET", "gateway-env-secret")],
    )
    .await;
    let pid = a.gw.pid().unwrap();
    let environ = format!("python3 -c \"print(open('/proc/{pid}/environ').read())\"");
    let fork_cmd = format!("python3 -c '{FORKS}'");
    let (results, seen) = a.turn(vec![shell(&environ), shell(&fork_cmd)]).await;
    assert!(!seen.contains("gateway-env-secret"), "{results:?}");
    let forked: u32 = results[1]
        .lines()
        .find_map(|l| l.strip_prefix("forked "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("{results:?}"));
    assert!(forked < 16, "{forked} processes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_landlock_the_shell_refuses_and_says_how_to_opt_out() {
    let simulate = [("SWITCHBOARD_SANDBOX_SIMULATE", "no-landlock")];
    let a = Attack::start(&profile("none", ""), &simulate).await;
    let (results, _) = a.turn(vec![shell("ls")]).await;
    assert!(results[0].contains("cannot confine"), "{results:?}");
    assert!(results[0].contains("[sandbox] required = false"), "{results:?}");
    let log = a.gw.log();
    assert!(log.contains("commands are refused on this kernel"), "{log}");
    // `check` says which layers hold.
    let (code, out, _) = a.sandbox.run(&["check", "--config", "switchboard.toml"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("sandbox: landlock active"), "{out}");
    // Opted out: commands run, and every start warns.
    let opted = Attack::start(&profile("none", "[sandbox]\nrequired = false\n"), &simulate).await;
    let (results, _) = opted.turn(vec![shell("ls")]).await;
    assert!(!results[0].starts_with("Error"), "{results:?}");
    assert!(opted.gw.log().contains("commands run UNCONFINED"), "{}", opted.gw.log());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_pid_namespace_or_signal_scope_the_shell_refuses() {
    let simulate = [("SWITCHBOARD_SANDBOX_SIMULATE", "no-pid-namespace,no-landlock-scopes")];
    let a = Attack::start(&profile("any", ""), &simulate).await;
    let (results, _) = a.turn(vec![shell("ls")]).await;
    assert!(
        results[0].contains("neither a PID namespace nor Landlock's signal scope"),
        "{results:?}"
    );
    assert!(results[0].contains("[sandbox] required = false"), "{results:?}");
    let check = std::process::Command::new(support::binary())
        .args(["check", "--config", "switchboard.toml"])
        .current_dir(a.sandbox.path())
        .envs(simulate)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&check.stdout);
    assert!(check.status.success(), "{out}");
    assert!(out.contains("sandbox: pid-namespace missing"), "{out}");
    assert!(out.contains("sandbox: ipc-namespace active"), "{out}");
    assert!(
        out.contains("warning: commands are refused on this kernel (no PID namespace"),
        "{out}"
    );
}
