//! What `git` may be asked to do by a tool call.
//!
//! git reads configuration that can name programs to run (`diff.external`,
//! `core.fsmonitor`, `core.pager`, aliases with `!`, hooks, textconv and
//! filter drivers). The shell tool therefore runs git with no system or
//! global configuration (`GIT_CONFIG_NOSYSTEM=1`, `GIT_CONFIG_GLOBAL=/dev/null`,
//! `HOME` outside the workspace) and hooks and fsmonitor off, the file tools
//! cannot reach a repository's `.git` folder, and here:
//!
//! * options that set configuration or move git elsewhere (`-c`,
//!   `--config-env`, `--exec-path`, `--git-dir`, `--work-tree`) are refused,
//!   and `-C` only into the workspace;
//! * only git's own subcommands run (an alias could be `!program`);
//! * subcommands and flags that run programs (`config`, `bisect run`,
//!   `rebase --exec`, `--upload-pack`, `grep -O`, `difftool`) are high risk.

/// git's built-in subcommands a tool may name (no aliases, no `help`,
/// which opens a pager or a browser).
const SUBCOMMANDS: &[&str] = &[
    "add",
    "am",
    "annotate",
    "apply",
    "archive",
    "bisect",
    "blame",
    "branch",
    "bundle",
    "cat-file",
    "check-attr",
    "check-ignore",
    "checkout",
    "cherry",
    "cherry-pick",
    "clean",
    "clone",
    "commit",
    "config",
    "count-objects",
    "describe",
    "diff",
    "diff-files",
    "diff-index",
    "diff-tree",
    "fetch",
    "for-each-ref",
    "format-patch",
    "fsck",
    "gc",
    "grep",
    "hash-object",
    "init",
    "log",
    "ls-files",
    "ls-remote",
    "ls-tree",
    "merge",
    "merge-base",
    "mv",
    "notes",
    "pull",
    "push",
    "range-diff",
    "rebase",
    "reflog",
    "remote",
    "reset",
    "restore",
    "rev-list",
    "rev-parse",
    "revert",
    "rm",
    "shortlog",
    "show",
    "show-ref",
    "stash",
    "status",
    "switch",
    "tag",
    "version",
    "whatchanged",
    "worktree",
];

/// Global options that take the next word as their value.
const VALUE_OPTIONS: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--config-env",
    "--super-prefix",
];

/// Global options refused outright.
const REFUSED: &[&str] = &[
    "-c",
    "--config-env",
    "--exec-path",
    "--git-dir",
    "--work-tree",
    "--super-prefix",
];

/// Flags that run a program named by the caller (or configure one), for
/// every subcommand (`*`) or one.
const LAUNCHING: &[(&str, &[&str])] = &[
    (
        "*",
        &[
            "--exec",
            "--upload-pack",
            "--receive-pack",
            "--ext-diff",
            "--textconv",
            "--config",
            "--template",
        ],
    ),
    ("rebase", &["-x"]),
    ("clone", &["-u", "-c"]),
    ("ls-remote", &["-u"]),
    ("grep", &["-O", "--open-files-in-pager"]),
];

fn is_launching_flag(sub: &str, arg: &str) -> bool {
    let name = arg.split_once('=').map_or(arg, |(n, _)| n);
    LAUNCHING
        .iter()
        .filter(|(s, _)| *s == "*" || *s == sub)
        .flat_map(|(_, flags)| flags.iter())
        .any(|f| name == *f || (f.len() == 2 && arg.starts_with(f) && !arg.starts_with("--")))
}

/// A git command line split at its subcommand.
pub(crate) struct GitCommand<'a> {
    /// Global options with their values, in order.
    pub globals: Vec<(&'a str, Option<&'a str>)>,
    pub subcommand: Option<&'a str>,
    pub rest: &'a [String],
}

pub(crate) fn parse(args: &[String]) -> GitCommand<'_> {
    let mut globals = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if !a.starts_with('-') {
            return GitCommand {
                globals,
                subcommand: Some(a),
                rest: &args[i + 1..],
            };
        }
        if let Some(v) = a.strip_prefix("-C").filter(|v| !v.is_empty()) {
            globals.push(("-C", Some(v)));
        } else if let Some(v) = a.strip_prefix("-c").filter(|v| !v.is_empty()) {
            globals.push(("-c", Some(v)));
        } else if let Some((name, value)) = a.split_once('=') {
            globals.push((name, Some(value)));
        } else if VALUE_OPTIONS.contains(&a) {
            globals.push((a, args.get(i + 1).map(String::as_str)));
            i += 1;
        } else {
            globals.push((a, None));
        }
        i += 1;
    }
    GitCommand {
        globals,
        subcommand: None,
        rest: &[],
    }
}

/// Why this git command may not run at all; `-C` targets are returned for
/// the caller to confine to the workspace.
pub(crate) fn refusal(args: &[String]) -> Result<Vec<&str>, String> {
    let cmd = parse(args);
    let mut dirs = Vec::new();
    for (name, value) in &cmd.globals {
        if REFUSED.contains(name) {
            return Err(format!(
                "git {name} is refused: it sets configuration or points git outside the workspace, and configuration can name programs to run"
            ));
        }
        if *name == "-C" {
            dirs.push(value.unwrap_or(""));
        }
    }
    if matches!(cmd.subcommand, Some("apply" | "am")) && cmd.rest.iter().any(|a| a == "--unsafe-paths") {
        return Err(
            "git apply --unsafe-paths is refused: it writes files outside the workspace; apply patches whose paths stay inside it".into(),
        );
    }
    match cmd.subcommand {
        Some(sub) if SUBCOMMANDS.contains(&sub) => Ok(dirs),
        Some(sub) => Err(format!(
            "'git {sub}' is refused: only git's own subcommands run (aliases could start any program)"
        )),
        None => Ok(dirs),
    }
}

/// Subcommands that only read, whatever their arguments, unless they
/// write a file (`--output`).
const READ: &[&str] = &[
    "status",
    "log",
    "diff",
    "show",
    "blame",
    "rev-parse",
    "ls-files",
    "describe",
];

/// Whether this git command only reads: the read-only subcommands, and
/// `branch`, `tag` and `remote` when they list rather than change.
pub(crate) fn only_reads(args: &[String]) -> bool {
    let cmd = parse(args);
    let Some(sub) = cmd.subcommand else {
        return true;
    };
    let rest: Vec<&str> = cmd.rest.iter().map(String::as_str).collect();
    if rest.iter().any(|a| *a == "--output" || a.starts_with("--output=")) {
        return false;
    }
    let positional = || rest.iter().any(|a| !a.starts_with('-'));
    let listing = || rest.iter().any(|a| ["-l", "--list"].contains(a));
    match sub {
        s if READ.contains(&s) => true,
        // `git branch` / `git tag` list; with a name they create, and
        // -d/-D/-f/-m/-c change.
        "branch" | "tag" => {
            const CHANGING: &[&str] = &[
                "-d",
                "-D",
                "--delete",
                "-f",
                "--force",
                "-m",
                "-M",
                "--move",
                "-c",
                "-C",
                "--copy",
                "-u",
                "--set-upstream-to",
                "--unset-upstream",
                "--edit-description",
                "-a",
                "-s",
                "-u",
                "--annotate",
                "--sign",
                "-F",
                "--file",
            ];
            let changes = rest.iter().any(|a| {
                let name = a.split_once('=').map_or(*a, |(n, _)| n);
                CHANGING.contains(&name) && !(sub == "branch" && name == "-a")
            });
            !changes && (!positional() || listing())
        }
        "remote" => matches!(
            rest.iter().find(|a| !a.starts_with('-')),
            None | Some(&("show" | "get-url"))
        ),
        _ => false,
    }
}

/// Whether this git command runs programs or rewrites configuration.
pub(crate) fn launches_programs(args: &[String]) -> bool {
    let cmd = parse(args);
    if cmd
        .globals
        .iter()
        .any(|(n, _)| REFUSED.contains(n) && *n != "--git-dir" && *n != "--work-tree")
    {
        return true;
    }
    let sub = cmd.subcommand.unwrap_or("");
    let launching_flag = cmd.rest.iter().any(|a| is_launching_flag(sub, a));
    match cmd.subcommand {
        Some("config") => true,
        Some("bisect") => cmd.rest.first().is_some_and(|a| a == "run") || launching_flag,
        Some("difftool" | "mergetool" | "filter-branch") => true,
        Some(_) => launching_flag,
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(cmd: &str) -> Vec<String> {
        shell_words::split(cmd).unwrap()
    }

    #[test]
    fn refused_options_and_aliases() {
        for bad in [
            "-c diff.external=x diff",
            "-cdiff.external=x diff",
            "--config-env=diff.external=X diff",
            "--exec-path=/tmp status",
            "--git-dir=/elsewhere/.git log",
            "--work-tree /tmp status",
            "st",
            "help log",
        ] {
            assert!(refusal(&argv(bad)).is_err(), "{bad}");
        }
        assert_eq!(refusal(&argv("-C sub status")).unwrap(), ["sub"]);
        assert_eq!(refusal(&argv("-C/tmp status")).unwrap(), ["/tmp"]);
        assert!(refusal(&argv("--no-pager log --oneline")).is_ok());
        assert!(refusal(&argv("apply --unsafe-paths -p0 p.diff")).is_err());
        assert!(refusal(&argv("apply p.diff")).is_ok());
    }

    #[test]
    fn reading_is_told_from_changing() {
        for yes in [
            "status",
            "log --oneline",
            "diff HEAD~1",
            "branch",
            "branch -a",
            "branch --list 'feat*'",
            "tag",
            "tag -l 'v1*'",
            "remote -v",
            "remote show origin",
        ] {
            assert!(only_reads(&argv(yes)), "{yes}");
        }
        for no in [
            "branch -D main",
            "branch -f main HEAD~3",
            "branch new-one",
            "branch -m old new",
            "tag -d v1",
            "tag v2",
            "remote remove origin",
            "remote add x ../y",
            "diff --output=x.txt",
            "log --output x.txt",
            "init --separate-git-dir=gd wt",
            "commit -m x",
        ] {
            assert!(!only_reads(&argv(no)), "{no}");
        }
    }

    #[test]
    fn launching_subcommands_and_flags() {
        for yes in [
            "config alias.x '!touch y'",
            "bisect run ./x",
            "rebase --exec ./x main",
            "rebase -x ./x main",
            "fetch --upload-pack=./x origin",
            "clone -u ./x repo",
            "push --receive-pack=./x",
            "grep -O pattern",
            "grep -Oless pattern",
            "diff --ext-diff",
            "clone --config core.fsmonitor=x repo",
        ] {
            assert!(launches_programs(&argv(yes)), "{yes}");
        }
        for no in [
            "status",
            "log -p",
            "diff HEAD~1",
            "commit -m x",
            "bisect start",
            "add -u",
            "push -u origin main",
            "grep -o x",
        ] {
            assert!(!launches_programs(&argv(no)), "{no}");
        }
    }
}
