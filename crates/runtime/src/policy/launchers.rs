//! Programs and flags that make an allowed program start another one.
//!
//! `allowed_commands` names the programs an agent may run. A program that
//! starts programs of the caller's choosing (`env touch x`, `find -exec`,
//! `xargs`, `rg --pre`, `sort --compress-program`, `git -c alias.x=!cmd`)
//! would turn that list into "anything", so such a command is high risk
//! whatever the program's usual risk: blocked while
//! `block_high_risk_commands = true`, otherwise asked for. The table is
//! documented in docs/security.md.

/// Programs whose whole purpose is to run another program.
const RUNNERS: &[&str] = &[
    "xargs",
    "timeout",
    "nice",
    "nohup",
    "stdbuf",
    "setsid",
    "watch",
    "flock",
    "time",
    "chroot",
    "strace",
    "ltrace",
    "gdb",
    "sh",
    "bash",
    "dash",
    "zsh",
    "ksh",
    "fish",
    "busybox",
    "parallel",
    "script",
    "unshare",
    "nsenter",
    "runuser",
    "sg",
    "newgrp",
    "ionice",
    "taskset",
    "chrt",
    "setpriv",
    "prlimit",
    "systemd-run",
    "at",
    "batch",
];

/// Flags (exact, or as a `--flag=value` prefix) that make a program run a
/// program named in its arguments.
const LAUNCHING_FLAGS: &[(&str, &[&str])] = &[
    ("find", &["-exec", "-execdir", "-ok", "-okdir"]),
    ("rg", &["--pre"]),
    ("sort", &["--compress-program"]),
    (
        "tar",
        &[
            "--to-command",
            "--use-compress-program",
            "-I",
            "--checkpoint-action",
            "--info-script",
            "-F",
            "--new-volume-script",
        ],
    ),
    ("rsync", &["-e", "--rsh", "--rsync-path"]),
    ("ssh", &["-oProxyCommand", "-oLocalCommand", "-oPermitLocalCommand"]),
    ("scp", &["-S", "-oProxyCommand"]),
    ("less", &["-o", "--log-file"]),
    ("man", &["-P", "--pager", "-H", "--html"]),
    ("zip", &["-T", "-TT", "--unzip-command"]),
];

/// Whether `argv` would start a program of the caller's choosing.
pub(crate) fn launches_programs(argv: &[String]) -> bool {
    let Some(program) = argv.first().map(String::as_str) else {
        return false;
    };
    let args = &argv[1..];
    if RUNNERS.contains(&program) {
        return true;
    }
    if program == "env" {
        // `env` alone prints the environment; any word that is not an
        // option or an assignment is a program to run.
        return args.iter().any(|a| !a.starts_with('-') && !a.contains('='))
            || args.iter().any(|a| a == "-S" || a.starts_with("--split-string"));
    }
    if program == "ssh" && joined_options(args).any(|o| o.contains("proxycommand") || o.contains("localcommand")) {
        return true;
    }
    let Some((_, flags)) = LAUNCHING_FLAGS.iter().find(|(p, _)| *p == program) else {
        return false;
    };
    args.iter().any(|a| {
        flags.iter().any(|f| {
            a == f
                || a.strip_prefix(f).is_some_and(|rest| rest.starts_with('='))
                // `-Icmd` / `-ecmd`: a short flag with its value attached.
                || (f.len() == 2 && !f.starts_with("--") && a.starts_with(f) && a.len() > 2)
        })
    })
}

/// `-o Key=v` / `-oKey=v` options, lower-cased.
fn joined_options(args: &[String]) -> impl Iterator<Item = String> + '_ {
    args.iter().enumerate().filter_map(|(i, a)| {
        if a == "-o" {
            args.get(i + 1).map(|v| v.to_ascii_lowercase())
        } else {
            a.strip_prefix("-o").map(str::to_ascii_lowercase)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::launches_programs;

    fn launches(cmd: &str) -> bool {
        launches_programs(&shell_words::split(cmd).unwrap())
    }

    #[test]
    fn launching_commands() {
        for yes in [
            "env touch x",
            "env A=1 touch x",
            "env -i sh",
            "env -S 'touch x'",
            "xargs touch",
            "find . -exec touch {} ;",
            "find . -execdir rm {} +",
            "find . -ok rm {} ;",
            "rg --pre ./x pattern",
            "rg --pre=./x pattern",
            "sort --compress-program=./x big",
            "sort --compress-program ./x big",
            "tar -cf a.tar -I ./x .",
            "tar -Ixz -cf a.tar .",
            "tar --to-command=./x -xf a.tar",
            "rsync -e ./x a b",
            "ssh -o ProxyCommand=./x host",
            "ssh -oProxyCommand=./x host",
            "timeout 5 ls",
            "nice ls",
            "bash -c ls",
        ] {
            assert!(launches(yes), "{yes}");
        }
        for no in [
            "env",
            "env -0",
            "find . -name '*.rs'",
            "rg pattern",
            "rg --pretty pattern",
            "sort -r list",
            "tar -cf a.tar .",
            "ls -la",
            "ssh -o ServerAliveInterval=5 host",
        ] {
            assert!(!launches(no), "{no}");
        }
    }
}
