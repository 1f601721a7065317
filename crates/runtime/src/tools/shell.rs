//! `shell`: run one allowed program inside the agent workspace.
//!
//! There is no shell in between: the command line is split into words and
//! the program is executed directly, so pipes, redirects and substitutions
//! cannot smuggle in a second command past the policy.

use super::{Tool, ToolContext, ToolResult, parse_args, truncate};
use crate::policy::{CommandRisk, Effect, classify_command, resolve_in_workspace};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use std::process::Stdio;
use std::time::Duration;

pub(crate) struct Shell;

#[derive(Deserialize)]
struct Args {
    command: String,
}

const OPERATORS: &[&str] = &["|", "||", "&&", ";", "&", ">", ">>", "<", "<<", "2>", "2>&1", "&>"];
const MAX_OUTPUT: usize = 16 * 1024;

fn argv_of(args: &Value) -> Option<Vec<String>> {
    let cmd = args.get("command")?.as_str()?;
    shell_words::split(cmd).ok()
}

fn check_argv(argv: &[String], ctx: &ToolContext) -> Result<(), String> {
    let Some(program) = argv.first() else {
        return Err("empty command".into());
    };
    if argv
        .iter()
        .any(|w| OPERATORS.contains(&w.as_str()) || w.contains("$(") || w.contains('`'))
    {
        return Err("shell runs one program without a shell: pipes, redirects, ';', '&&', '$(...)' and backticks are not supported; run one command at a time".into());
    }
    let base = program.rsplit('/').next().unwrap_or(program);
    let p = &ctx.policy;
    if !p.allows_command(base) {
        return Err(format!(
            "command '{base}' is not allowed by risk profile '{name}'; add it to [risk_profiles.{name}].allowed_commands",
            name = p.profile_name
        ));
    }
    if p.workspace_only {
        for word in &argv[1..] {
            let value = word.split_once('=').map(|(_, v)| v).unwrap_or(word);
            let looks_like_path =
                value.starts_with('/') || value.starts_with('~') || value.split('/').any(|part| part == "..");
            if looks_like_path {
                resolve_in_workspace(&p.workspace, value, &p.forbidden_paths).map_err(|e| e.to_string())?;
            }
        }
    }
    Ok(())
}

#[async_trait]
impl Tool for Shell {
    fn name(&self) -> &'static str {
        "shell"
    }

    fn description(&self) -> String {
        "Run one command (a program from the allowed list and its arguments) in the agent workspace. No pipes or redirects.".into()
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"command": {"type": "string", "description": "The command line, e.g. `ls -la`"}},
            "required": ["command"]
        })
    }

    fn effect(&self, args: &Value) -> Effect {
        match argv_of(args) {
            Some(argv) => match classify_command(&argv) {
                CommandRisk::Low => Effect::Write(CommandRisk::Low),
                r => Effect::Write(r),
            },
            None => Effect::Write(CommandRisk::Medium),
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
        if let Err(e) = check_argv(&argv, ctx) {
            return ToolResult::fail(e);
        }
        let workspace = &ctx.policy.workspace;
        let mut cmd = tokio::process::Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .current_dir(workspace)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into()))
            .env("HOME", workspace)
            .env("LANG", "C.UTF-8")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => return ToolResult::fail(format!("cannot start '{}': {e}", argv[0])),
        };
        let timeout = Duration::from_secs(ctx.policy.shell_timeout_secs);
        let output = tokio::select! {
            out = child.wait_with_output() => out,
            _ = tokio::time::sleep(timeout) => {
                return ToolResult::fail(format!("command timed out after {}s and was killed", timeout.as_secs()));
            }
            _ = ctx.cancel.cancelled() => return ToolResult::fail("command cancelled"),
        };
        let output = match output {
            Ok(o) => o,
            Err(e) => return ToolResult::fail(format!("command failed to run: {e}")),
        };
        let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr);
        if !stderr.trim().is_empty() {
            text.push_str("\n[stderr]\n");
            text.push_str(&stderr);
        }
        let text = truncate(&text, MAX_OUTPUT);
        match output.status.code() {
            Some(0) => ToolResult::ok(text),
            code => ToolResult {
                success: false,
                output: text,
                error: Some(match code {
                    Some(c) => format!("command exited with status {c}"),
                    None => "command was killed by a signal".into(),
                }),
            },
        }
    }
}
