//! `shell`: run one allowed program inside the agent workspace.
//!
//! There is no shell in between: the command line is split into words and
//! the program is executed directly, so pipes, redirects and substitutions
//! cannot smuggle in a second command past the policy. The program is
//! named (never a path) and found in a fixed search path (`program`);
//! every word that may name a file stays in the workspace (`paths`); git
//! runs without configuration that could start programs (`policy::git_rules`)
//! and only on repositories at `<workspace>/**/.git` (`repository`).
//! Those checks are the first, friendlier refusal; what holds is the
//! kernel: the program runs confined to the workspace, without network
//! unless the risk profile allows it, under resource limits
//! (`switchboard_sandbox`, docs/security.md).
//! Output is capped while it is read, and a timeout or cancel kills the
//! command's whole process group (and its cgroup, where there is one).

mod output;
mod paths;
mod program;
mod repository;

use super::{Tool, ToolContext, ToolResult, parse_args};
use crate::policy::{Risk, classify_command, git_refusal};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::Value;
use std::process::Stdio;
use std::time::Duration;

pub(crate) struct Shell;

#[derive(Deserialize)]
struct Args {
    command: String,
}

const OPERATORS: &[&str] = &["|", "||", "&&", ";", "&", ">", ">>", "<", "<<", "2>", "2>&1", "&>"];

fn argv_of(args: &Value) -> Option<Vec<String>> {
    let cmd = args.get("command")?.as_str()?;
    shell_words::split(cmd).ok()
}

/// Check the command against the policy; the program to execute.
fn check_argv(argv: &[String], ctx: &ToolContext) -> Result<std::path::PathBuf, String> {
    let Some(name) = argv.first() else {
        return Err("empty command".into());
    };
    if argv
        .iter()
        .any(|w| OPERATORS.contains(&w.as_str()) || w.contains("$(") || w.contains('`'))
    {
        return Err("shell runs one program without a shell: pipes, redirects, ';', '&&', '$(...)' and backticks are not supported; run one command at a time".into());
    }
    let executable = program::resolve(name)?;
    let p = &ctx.policy;
    if !p.allows_command(name) {
        // The setting that would allow it is for operators, not for a
        // model that may repeat it to the person (docs/approvals.md).
        ctx.host.tell_operators(
            &ctx.agent,
            &format!("command {name}"),
            format!(
                "Agent {agent} was refused the command '{name}'. To allow it, add it to [risk_profiles.{profile}].allowed_commands.",
                agent = ctx.agent,
                profile = p.profile_name
            ),
        );
        return Err(format!(
            "command '{name}' is not allowed for this agent. Do not run it again or try to get the same effect another way; tell the user it was refused."
        ));
    }
    // Where the program works, relative to the workspace (git's `-C`).
    let mut base = std::path::PathBuf::new();
    if name == "git" {
        for dir in git_refusal(&argv[1..])? {
            crate::policy::resolve_in_workspace(&p.workspace, &base.join(dir).to_string_lossy(), &p.forbidden_paths)
                .map_err(|e| e.to_string())?;
            base.push(dir);
        }
        repository::check(&p.workspace, &base)?;
    }
    if p.workspace_only {
        paths::check(&argv[1..], &p.workspace, &base, &p.forbidden_paths)?;
    }
    Ok(executable)
}

#[async_trait]
impl Tool for Shell {
    fn name(&self) -> &'static str {
        "shell"
    }

    fn effect(&self, args: &Value) -> Risk {
        match argv_of(args) {
            Some(argv) => classify_command(&argv),
            None => Risk::Medium,
        }
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> ToolResult {
        let args: Args = match parse_args("shell", args) {
            Ok(a) => a,
            Err(e) => return e,
        };
        let argv = match shell_words::split(&args.command) {
            Ok(v) => v,
            Err(e) => return ToolResult::fail(format!("cannot parse the command line: {e}")),
        };
        let executable = match check_argv(&argv, ctx) {
            Ok(x) => x,
            Err(e) => {
                switchboard_telemetry::metrics::sandbox_refusal("command");
                return ToolResult::fail(e);
            }
        };
        let network = crate::confinement::network_of(ctx.policy.profile.network);
        let mut confined = match ctx.host.sandbox().confine(&ctx.policy.workspace, network) {
            Ok(c) => c,
            Err(why) => {
                switchboard_telemetry::metrics::sandbox_refusal("kernel");
                return ToolResult::fail(why.to_string());
            }
        };
        let mut cmd = tokio::process::Command::new(&executable);
        if argv[0] == "git" {
            cmd.args(program::GIT_PREFIX);
        }
        cmd.args(&argv[1..])
            .current_dir(&ctx.policy.workspace)
            .env_clear()
            .envs(program::environment(&argv[0], &ctx.policy.workspace))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own process group, so a timeout kills what it started too.
            .process_group(0)
            .kill_on_drop(true);
        confined.apply(&mut cmd);
        let child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => return ToolResult::fail(format!("cannot start '{}': {e}", argv[0])),
        };
        let timeout = Duration::from_secs(ctx.policy.shell_timeout_secs);
        // Whatever the command left running in its cgroup ends with it.
        let run = output::collect(child, timeout, &ctx.cancel, move || drop(confined)).await;
        let text = run.text();
        match run.end {
            output::End::Exited(0) => ToolResult::ok(text),
            output::End::TimedOut => ToolResult {
                success: false,
                output: text,
                error: Some(format!("command timed out after {}s and was killed", timeout.as_secs())),
            },
            output::End::Cancelled => ToolResult::fail("command cancelled"),
            output::End::Failed(e) => ToolResult::fail(format!("command failed to run: {e}")),
            end => ToolResult {
                success: false,
                output: text,
                error: Some(match end {
                    output::End::Exited(c) => format!("command exited with status {c}"),
                    _ => "command was killed by a signal".into(),
                }),
            },
        }
    }
}
