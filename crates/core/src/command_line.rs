//! Reading a typed command line against the catalog (`catalog.rs`): the
//! catalog's arguments decide what a command takes, so a command cannot be
//! listed one way and read another. Adapters' menu picks arrive as a name
//! and words and are read the same way.

use crate::catalog::{ArgKind, CATALOG, CommandId, CommandSpec};

/// What a line that starts with `/` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandLine {
    /// A command of the catalog, with its arguments.
    Known(Invocation),
    /// `/cmd@otherbot`: addressed to another bot in the group.
    ForAnotherBot,
    /// A name the catalog does not have (lowercase).
    Unknown(String),
    /// A command of the catalog typed wrong: how to type it
    /// (`/subagents info <id|#>`), or what went wrong.
    Usage(String),
}

/// A command with the arguments it was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// Which command (for one with sub-commands, which sub-command).
    pub id: CommandId,
    /// Each argument given, by its catalog name (a flag's value is empty).
    given: Vec<(&'static str, String)>,
}

impl Invocation {
    /// The text argument `name`, when given.
    pub fn text(&self, name: &str) -> Option<&str> {
        self.given.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
    }

    /// Whether the flag `name` was given.
    pub fn flag(&self, name: &str) -> bool {
        self.given.iter().any(|(n, _)| *n == name)
    }

    /// The number argument `name`, when given.
    pub fn number(&self, name: &str) -> Option<u64> {
        self.text(name).and_then(|v| v.parse().ok())
    }
}

impl CommandLine {
    /// Read `text`; `None` when it is not a command (it goes to the agent).
    pub fn read(text: &str) -> Option<Self> {
        read(text)
    }

    /// Read the command `name` given `words` (a menu pick).
    pub fn of(name: &str, words: &[&str]) -> Self {
        read_words(name, words)
    }
}

fn read(text: &str) -> Option<CommandLine> {
    let rest = text.trim().strip_prefix('/')?;
    let mut words = rest.split_whitespace();
    // `/cmd@botname` is how some platforms address one bot in a group. The
    // adapter removes this bot's own name, so a name left is another bot's.
    let name = words.next()?;
    if name.contains('@') {
        return Some(CommandLine::ForAnotherBot);
    }
    let words: Vec<&str> = words.collect();
    Some(read_words(name, &words))
}

fn read_words(name: &str, words: &[&str]) -> CommandLine {
    let Some(spec) = CATALOG.iter().find(|c| c.name.eq_ignore_ascii_case(name)) else {
        return CommandLine::Unknown(name.to_lowercase());
    };
    if spec.subcommands.is_empty() {
        return bind(spec, words, &format!("/{}", spec.name));
    }
    // No sub-command word: the first one (`/subagents` lists).
    let Some((first, rest)) = words.split_first() else {
        return bind(&spec.subcommands[0], &[], "");
    };
    match spec.subcommands.iter().find(|s| s.name.eq_ignore_ascii_case(first)) {
        Some(sub) => bind(sub, rest, &format!("/{} {}", spec.name, sub.name)),
        None => {
            let names: Vec<&str> = spec.subcommands.iter().map(|s| s.name).collect();
            let (last, others) = names.split_last().unwrap_or((&"", &[]));
            CommandLine::Usage(format!(
                "unknown /{} command '{first}'; use {} or {last}",
                spec.name,
                others.join(", ")
            ))
        }
    }
}

/// `words` as the arguments of `spec` (typed as `path`). Text arguments
/// take one word each, the last argument the rest of the line; flags
/// (by name) and numbers may come in any order after them.
fn bind(spec: &CommandSpec, words: &[&str], path: &str) -> CommandLine {
    let usage = || CommandLine::Usage(format!("{path} {}", spec.usage).trim_end().to_string());
    let mut given = Vec::new();
    let mut left = words;
    let mut options = Vec::new();
    for (n, arg) in spec.args.iter().enumerate() {
        if arg.kind != ArgKind::Text {
            options.push(arg);
            continue;
        }
        let last = n + 1 == spec.args.len();
        match left.split_first() {
            None if arg.required => return usage(),
            None => {}
            Some(_) if last => {
                given.push((arg.name, left.join(" ")));
                left = &[];
            }
            Some((word, rest)) => {
                given.push((arg.name, (*word).to_string()));
                left = rest;
            }
        }
    }
    for word in left {
        let flag = options
            .iter()
            .find(|a| a.kind == ArgKind::Flag && a.name.eq_ignore_ascii_case(word));
        let number = options
            .iter()
            .find(|a| a.kind == ArgKind::Number && word.parse::<u64>().is_ok());
        match flag.or(number) {
            Some(arg) if !given.iter().any(|(n, _)| n == &arg.name) => {
                let value = if arg.kind == ArgKind::Flag {
                    String::new()
                } else {
                    (*word).to_string()
                };
                given.push((arg.name, value));
            }
            _ => return usage(),
        }
    }
    if options
        .iter()
        .any(|a| a.required && !given.iter().any(|(n, _)| n == &a.name))
    {
        return usage();
    }
    CommandLine::Known(Invocation { id: spec.id, given })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known(text: &str) -> Invocation {
        match read(text) {
            Some(CommandLine::Known(i)) => i,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn lines_are_read_by_the_catalogs_arguments() {
        assert_eq!(read("hello"), None);
        assert_eq!(read("/status@other_bot now"), Some(CommandLine::ForAnotherBot));
        assert_eq!(read("/frobnicate x"), Some(CommandLine::Unknown("frobnicate".into())));
        let a = known("/Approve ab12 ALWAYS");
        assert_eq!(
            (a.id, a.text("id"), a.flag("always")),
            (CommandId::Approve, Some("ab12"), true)
        );
        let d = known("/deny ab12 too risky");
        assert_eq!((d.text("id"), d.text("reason")), (Some("ab12"), Some("too risky")));
        assert_eq!(read("/deny"), Some(CommandLine::Usage("/deny <id> [reason]".into())));
        assert_eq!(read("/unpair"), Some(CommandLine::Usage("/unpair <id>".into())));
        // The last argument takes the rest of the line.
        assert_eq!(known("/unpair tg:1 tg:2").text("id"), Some("tg:1 tg:2"));
        assert_eq!(known("/subagents").id, CommandId::SubagentsList);
        let l = known("/subagents log #2 tools 50");
        assert_eq!(
            (l.id, l.text("id"), l.number("limit"), l.flag("tools")),
            (CommandId::SubagentsLog, Some("#2"), Some(50), true)
        );
        assert_eq!(
            read("/subagents log #2 many"),
            Some(CommandLine::Usage("/subagents log <id|#> [limit] [tools]".into()))
        );
        let s = known("/subagents send #2 look at the tests");
        assert_eq!(
            (s.text("id"), s.text("message")),
            (Some("#2"), Some("look at the tests"))
        );
        assert_eq!(
            read("/subagents explode"),
            Some(CommandLine::Usage(
                "unknown /subagents command 'explode'; use list, info, log, send, kill, pause or resume".into()
            ))
        );
        assert!(known("/subagents pause all").flag("all"));
        assert_eq!(
            known("/compact keep the numbers").text("focus"),
            Some("keep the numbers")
        );
        assert_eq!(known("/model").text("name"), None);
    }
}
