//! The chat commands, once: names, arguments, descriptions and who may use
//! them. The parser (`command_line.rs`), the gateway's `/help`, Telegram's command menu and
//! Discord's application commands are all made from this table, so they
//! cannot drift apart.

/// What an argument holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgKind {
    /// A word, or the rest of the line for the last argument.
    Text,
    /// A whole number.
    Number,
    /// A yes/no switch, given by its name (`always`, `tools`).
    Flag,
}

/// One argument of a command.
#[derive(Debug, Clone, Copy)]
pub struct ArgSpec {
    /// Its name (a Discord option name; the word a flag is typed as).
    pub name: &'static str,
    /// What it holds.
    pub kind: ArgKind,
    /// Whether it must be given.
    pub required: bool,
    /// One line for menus.
    pub about: &'static str,
}

/// Which command (or sub-command) a catalog entry is: what the gateway
/// matches on, so a command in the catalog that nothing answers does not
/// compile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum CommandId {
    Help,
    New,
    Status,
    Agents,
    Tools,
    Skills,
    Model,
    Compact,
    Stop,
    Subagents,
    Approve,
    Deny,
    Pair,
    Unpair,
    People,
    Console,
    Attach,
    SubagentsList,
    SubagentsInfo,
    SubagentsLog,
    SubagentsSend,
    SubagentsKill,
    SubagentsPause,
    SubagentsResume,
}

/// One command (or sub-command).
#[derive(Debug, Clone, Copy)]
pub struct CommandSpec {
    /// Which one it is.
    pub id: CommandId,
    /// The word after `/`.
    pub name: &'static str,
    /// How it is typed after its name, for `/help`.
    pub usage: &'static str,
    /// One line for menus and `/help` (platform menus allow 100 characters).
    pub about: &'static str,
    /// Who may use it.
    pub who: &'static str,
    /// Its arguments, in the order they are typed.
    pub args: &'static [ArgSpec],
    /// Its sub-commands (then `args` is empty).
    pub subcommands: &'static [CommandSpec],
    /// Answered to the person alone where the platform can (Discord).
    pub private: bool,
    /// Only in the terminal chat (`switchboard chat`), not in platform menus.
    pub terminal_only: bool,
}

const fn arg(name: &'static str, kind: ArgKind, required: bool, about: &'static str) -> ArgSpec {
    ArgSpec {
        name,
        kind,
        required,
        about,
    }
}

const fn cmd(
    id: CommandId,
    name: &'static str,
    usage: &'static str,
    about: &'static str,
    who: &'static str,
) -> CommandSpec {
    CommandSpec {
        id,
        name,
        usage,
        about,
        who,
        args: &[],
        subcommands: &[],
        private: false,
        terminal_only: false,
    }
}

const ANYONE: &str = "anyone admitted to the chat";
const APPROVERS: &str = "approvers named by an approval_route";
const RUN: ArgSpec = arg("id", ArgKind::Text, true, "Run id, #n from list, or all (kill)");

const SUBAGENTS: &[CommandSpec] = &[
    cmd(CommandId::SubagentsList, "list", "", "Child runs of this chat", ANYONE),
    CommandSpec {
        args: &[RUN],
        ..cmd(
            CommandId::SubagentsInfo,
            "info",
            "<id|#>",
            "One child run in detail",
            ANYONE,
        )
    },
    CommandSpec {
        args: &[
            RUN,
            arg("limit", ArgKind::Number, false, "How many messages"),
            arg("tools", ArgKind::Flag, false, "Include tool calls"),
        ],
        ..cmd(
            CommandId::SubagentsLog,
            "log",
            "<id|#> [limit] [tools]",
            "A child run's transcript",
            ANYONE,
        )
    },
    CommandSpec {
        args: &[RUN, arg("message", ArgKind::Text, true, "The message")],
        ..cmd(
            CommandId::SubagentsSend,
            "send",
            "<id|#> <message>",
            "Send a message to a child run",
            "who asked for the run, or an operator of its root agent",
        )
    },
    CommandSpec {
        args: &[RUN],
        ..cmd(
            CommandId::SubagentsKill,
            "kill",
            "<id|#|all>",
            "Stop a child run and its children",
            "who asked for the run, or an operator of its root agent",
        )
    },
    CommandSpec {
        args: &[arg("all", ArgKind::Flag, false, "For every agent")],
        ..cmd(
            CommandId::SubagentsPause,
            "pause",
            "[all]",
            "Refuse new delegations",
            "an operator of the chat's agent (of every agent for all)",
        )
    },
    CommandSpec {
        args: &[arg("all", ArgKind::Flag, false, "For every agent")],
        ..cmd(
            CommandId::SubagentsResume,
            "resume",
            "[all]",
            "Allow delegations again",
            "an operator of the chat's agent (of every agent for all)",
        )
    },
];

/// Every chat command, in the order `/help` lists them.
pub const CATALOG: &[CommandSpec] = &[
    cmd(CommandId::Help, "help", "", "What can be typed here", ANYONE),
    cmd(
        CommandId::New,
        "new",
        "",
        "Start a fresh conversation (the old one stays stored)",
        ANYONE,
    ),
    cmd(
        CommandId::Status,
        "status",
        "",
        "Agent, model, session and today's costs",
        ANYONE,
    ),
    cmd(CommandId::Agents, "agents", "", "The configured agents", ANYONE),
    cmd(
        CommandId::Tools,
        "tools",
        "",
        "The chat agent's tools, their risk and source",
        ANYONE,
    ),
    cmd(
        CommandId::Skills,
        "skills",
        "",
        "The chat agent's skills and what each is for",
        ANYONE,
    ),
    CommandSpec {
        args: &[arg("name", ArgKind::Text, false, "A provider the agent may use")],
        ..cmd(
            CommandId::Model,
            "model",
            "[name]",
            "This conversation's model, or switch it",
            ANYONE,
        )
    },
    CommandSpec {
        args: &[arg(
            "focus",
            ArgKind::Text,
            false,
            "What the summary should keep most of",
        )],
        ..cmd(
            CommandId::Compact,
            "compact",
            "[focus]",
            "Summarise the conversation so far into a short note (the last exchange stays)",
            ANYONE,
        )
    },
    cmd(
        CommandId::Stop,
        "stop",
        "",
        "Abort the current turn and every child it started",
        "who started the turn, or an operator of its agent",
    ),
    CommandSpec {
        subcommands: SUBAGENTS,
        ..cmd(
            CommandId::Subagents,
            "subagents",
            "list | info | log | send | kill | pause | resume",
            "List, inspect, steer or stop child runs",
            ANYONE,
        )
    },
    CommandSpec {
        args: &[
            arg("id", ArgKind::Text, true, "The request id"),
            arg("always", ArgKind::Flag, false, "For the rest of this run"),
        ],
        private: true,
        ..cmd(
            CommandId::Approve,
            "approve",
            "<id> [always]",
            "Approve a pending request",
            "the request's approvers",
        )
    },
    CommandSpec {
        args: &[
            arg("id", ArgKind::Text, true, "The request id"),
            arg("reason", ArgKind::Text, false, "Why"),
        ],
        private: true,
        ..cmd(
            CommandId::Deny,
            "deny",
            "<id> [reason]",
            "Deny a pending request",
            "the request's approvers",
        )
    },
    CommandSpec {
        args: &[arg("code", ArgKind::Text, true, "The code the person was given")],
        private: true,
        ..cmd(
            CommandId::Pair,
            "pair",
            "<code>",
            "Let in a person who asked with this code",
            APPROVERS,
        )
    },
    CommandSpec {
        args: &[arg("id", ArgKind::Text, true, "Their id, e.g. tg:42")],
        private: true,
        ..cmd(
            CommandId::Unpair,
            "unpair",
            "<id>",
            "Stop a paired person from talking to the bot",
            APPROVERS,
        )
    },
    CommandSpec {
        private: true,
        ..cmd(
            CommandId::People,
            "people",
            "",
            "People let in by pairing, waiting or refused",
            APPROVERS,
        )
    },
    CommandSpec {
        private: true,
        ..cmd(
            CommandId::Console,
            "console",
            "",
            "A sign-in link to the operator console (in a direct chat)",
            "approvers and [web] console_users",
        )
    },
    CommandSpec {
        terminal_only: true,
        ..cmd(
            CommandId::Attach,
            "attach",
            "<path> [caption]",
            "Send a file with a message (in chats, attach it as usual)",
            "the terminal's user",
        )
    },
];

/// The command `name` (case as typed does not matter).
pub fn command(name: &str) -> Option<&'static CommandSpec> {
    CATALOG.iter().find(|c| c.name.eq_ignore_ascii_case(name))
}

/// The commands a platform's menu offers.
pub fn menu() -> impl Iterator<Item = &'static CommandSpec> {
    CATALOG.iter().filter(|c| !c.terminal_only)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_descriptions_fit_every_platform_menu() {
        for c in CATALOG.iter().chain(SUBAGENTS) {
            // Telegram: 1–32 lowercase letters, digits, underscores;
            // Discord: 1–32 characters, descriptions 1–100.
            assert!(
                !c.name.is_empty()
                    && c.name.len() <= 32
                    && c.name.chars().all(|ch| ch.is_ascii_lowercase() || ch == '_'),
                "{}",
                c.name
            );
            assert!(!c.about.is_empty() && c.about.chars().count() <= 100, "{}", c.name);
            for a in c.args {
                assert!(a.about.chars().count() <= 100 && !a.name.is_empty());
            }
        }
        assert!(command("Subagents").is_some());
        assert!(menu().any(|c| c.name == "console") && menu().all(|c| c.name != "attach"));
    }
}
