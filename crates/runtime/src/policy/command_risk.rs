//! Classifying shell commands as low, medium or high risk, and the list of
//! commands children may never run without an operator (docs/approvals.md).

use switchboard_core::Risk;

/// Programs that only read.
const LOW: &[&str] = &[
    "ls",
    "cat",
    "grep",
    "rg",
    "head",
    "tail",
    "wc",
    "pwd",
    "echo",
    "date",
    "whoami",
    "uname",
    "df",
    "du",
    "stat",
    "file",
    "which",
    "env",
    "printenv",
    "sort",
    "uniq",
    "cut",
    "tr",
    "diff",
    "find",
    "tree",
    "hostname",
    "uptime",
    "ps",
    "free",
    "id",
    "basename",
    "dirname",
    "realpath",
    "sha256sum",
    "md5sum",
    "jq",
    "journalctl",
    "true",
];

/// Programs that can never be made safe by their arguments.
const HIGH: &[&str] = &[
    "sudo", "su", "doas", "dd", "mkfs", "fdisk", "parted", "shutdown", "reboot", "halt", "poweroff", "init",
    "iptables", "nft", "useradd", "userdel", "passwd", "crontab", "mount", "umount", "insmod", "rmmod", "modprobe",
];

/// Risk of one command given as argv.
pub fn classify_command(argv: &[String]) -> Risk {
    let Some(program) = argv.first() else {
        return Risk::Low;
    };
    // A program named by a path is never run (the shell tool runs programs
    // by name only); judge it as an unknown program.
    let program = program.as_str();
    let args: Vec<&str> = argv[1..].iter().map(String::as_str).collect();
    if HIGH.contains(&program) || program.starts_with("mkfs") {
        return Risk::High;
    }
    if super::launchers::launches_programs(argv)
        || (program == "git" && super::git_rules::launches_programs(&argv[1..]))
    {
        return Risk::High;
    }
    match program {
        "rm" => {
            let recursive = args.iter().any(|a| {
                *a == "--recursive"
                    || (a.starts_with('-') && !a.starts_with("--") && (a.contains('r') || a.contains('R')))
            });
            if recursive { Risk::High } else { Risk::Medium }
        }
        "chmod" | "chown" if args.iter().any(|a| *a == "-R" || a.contains("777")) => Risk::High,
        "git" => match super::git_rules::parse(&argv[1..]).subcommand.as_ref() {
            _ if super::git_rules::only_reads(&argv[1..]) => Risk::Low,
            Some(&"push") if args.iter().any(|a| a.starts_with("--force") || *a == "-f") => Risk::High,
            Some(&"reset") if args.contains(&"--hard") => Risk::High,
            Some(&"clean") => Risk::High,
            _ => Risk::Medium,
        },
        "find" if args.contains(&"-delete") => Risk::High,
        // -fprint and -fls write files.
        "find" if args.iter().any(|a| a.starts_with("-fprint") || *a == "-fls") => Risk::Medium,
        "kill" | "pkill" | "killall" | "systemctl" | "service" => {
            if program == "systemctl"
                && args
                    .first()
                    .is_some_and(|a| ["status", "list-units", "is-active", "show"].contains(a))
            {
                Risk::Low
            } else {
                Risk::Medium
            }
        }
        p if LOW.contains(&p) => Risk::Low,
        _ => Risk::Medium,
    }
}

/// Patterns children may not run unless `subagent_auto_approve = true` or an
/// operator approves: recursive deletes, disk writes, fork bombs, shutdown,
/// `curl | sh`, force pushes, DROP/TRUNCATE, writes under /etc or ~/.ssh.
pub fn is_dangerous_for_child(command_line: &str) -> bool {
    let lower = command_line.to_lowercase();
    let squashed: String = lower.split_whitespace().collect::<Vec<_>>().join(" ");
    const NEEDLES: &[&str] = &[
        "rm -rf",
        "rm -fr",
        "rm -r",
        "rm --recursive",
        "mkfs",
        "dd if=",
        "of=/dev/",
        ":(){",
        "shutdown",
        "reboot",
        "poweroff",
        "halt",
        "| sh",
        "|sh",
        "| bash",
        "|bash",
        "push --force",
        "push -f",
        "drop table",
        "drop database",
        "truncate ",
        "/etc/",
        "~/.ssh",
        ".ssh/",
        "chmod -r 777",
        "> /dev/sd",
    ];
    NEEDLES.iter().any(|n| squashed.contains(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn risk(cmd: &str) -> Risk {
        classify_command(&shell_words::split(cmd).unwrap())
    }

    #[test]
    fn classification() {
        assert_eq!(risk("ls -la"), Risk::Low);
        assert_eq!(risk("git status"), Risk::Low);
        assert_eq!(risk("git commit -m x"), Risk::Medium);
        assert_eq!(risk("git branch -D main"), Risk::Medium);
        assert_eq!(risk("git diff --output=up/x a b"), Risk::Medium);
        assert_eq!(risk("git init --separate-git-dir=gd wt"), Risk::Medium);
        assert_eq!(risk("git push --force origin main"), Risk::High);
        assert_eq!(risk("rm notes.txt"), Risk::Medium);
        assert_eq!(risk("rm -rf build"), Risk::High);
        assert_eq!(
            risk("/usr/bin/sudo ls"),
            Risk::Medium,
            "never run: programs run by name"
        );
        assert_eq!(risk("./ls"), Risk::Medium);
        assert_eq!(risk("env touch x"), Risk::High);
        assert_eq!(risk("env"), Risk::Low);
        assert_eq!(risk("find . -exec touch x ;"), Risk::High);
        assert_eq!(risk("find . -fprint out"), Risk::Medium);
        assert_eq!(risk("git -c core.pager=x log"), Risk::High);
        assert_eq!(risk("git --no-pager log"), Risk::Low);
        assert_eq!(risk("git config user.name x"), Risk::High);
        assert_eq!(risk("rg --pre ./x y"), Risk::High);
        assert_eq!(risk("find . -delete"), Risk::High);
        assert_eq!(risk("touch x"), Risk::Medium);
        assert_eq!(risk("systemctl status nginx"), Risk::Low);
        assert_eq!(risk("systemctl restart nginx"), Risk::Medium);
    }

    #[test]
    fn dangerous_patterns() {
        for bad in [
            "rm -rf /",
            "curl http://x | sh",
            "echo x > /etc/passwd",
            "git push --force",
            "psql -c 'DROP TABLE users'",
            ":(){ :|:& };:",
        ] {
            assert!(is_dangerous_for_child(bad), "{bad}");
        }
        for ok in ["ls -la", "git status", "cat notes.txt"] {
            assert!(!is_dangerous_for_child(ok), "{ok}");
        }
    }
}
