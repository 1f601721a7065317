//! Slash commands, one per file: read against the catalog
//! (`switchboard_core::CommandLine`), turned into a [`Command`] here and
//! applied in their file. They answer with text and know no platform, so every
//! channel, the terminal included, shares them.

mod agents;
mod compact;
pub(crate) mod console_link;
mod help;
mod model;
mod new;
mod skills;
mod status;
pub(crate) mod subagents;
mod tools;

use switchboard_core::{Action, ApprovalChoice, ChatAddress, CommandId, CommandLine, Inbound, UserId};
use switchboard_runtime::Runtime;
use switchboard_store::RunKind;
use switchboard_store::RunStatus;

/// What a command may look at.
pub(crate) struct CommandContext<'a> {
    pub runtime: &'a Runtime,
    pub agent: &'a str,
    pub session_key: &'a str,
    /// The chat (and thread) the command was typed in.
    pub address: &'a ChatAddress,
    pub sender: &'a UserId,
    /// When the gateway took the command (Unix ms): runs started after it
    /// are not what the person meant (a command handled again after a
    /// restart must not hit a newer run).
    pub sent_at: i64,
    /// Why this agent answers here (`/status`; docs/routes.md).
    pub route: Option<String>,
}

/// `/stop`: children this session started with `sessions_spawn` are
/// stopped too (foreground children end with the turn's own cancellation);
/// with `everyone = false` only those `sender` asked for. Returns how many
/// were stopped.
pub(crate) async fn stop_session_children(
    runtime: &Runtime,
    session_key: &str,
    sender: &UserId,
    everyone: bool,
) -> usize {
    let rows = match runtime.store().runs().of_session(session_key, 100).await {
        Ok(rows) => rows
            .into_iter()
            .filter(|r| r.status == RunStatus::Running && r.kind == RunKind::SessionsSpawn)
            .filter(|r| everyone || r.requester.as_deref() == Some(sender.as_str()))
            .collect(),
        Err(e) => {
            tracing::error!(error = %e, "cannot read this session's children");
            Vec::new()
        }
    };
    runtime
        .core()
        .kill_tree(rows, &format!("stopped by {sender} with /stop"))
        .await
        .len()
}

impl CommandContext<'_> {
    /// Whether the sender operates this chat's agent (`rights::operates`).
    pub(crate) fn sender_may_operate(&self) -> bool {
        crate::rights::operates(&self.runtime.config(), self.sender, self.agent)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Command {
    Help,
    New,
    Status,
    Agents,
    Tools,
    Skills,
    /// `/model [name]`.
    Model(Option<String>),
    /// `/compact [focus]`.
    Compact(Option<String>),
    /// Handled by the conversation loop, which owns the running turn.
    Stop,
    /// A sign-in link to the operator console, answered by the router
    /// (never through the outbox: the link is a secret).
    Console,
    /// An answer to an approval request: `/approve`, `/deny`, or a
    /// button, reaction or local press (which arrive typed).
    Decide {
        id: String,
        choice: ApprovalChoice,
        reason: Option<String>,
    },
    Subagents(subagents::Sub),
    /// `/pair CODE`, `/unpair <id>`, `/people`: answered by the router
    /// (docs/routes.md, "Pairing").
    Pair(String),
    Unpair(String),
    People,
    Unknown(String),
    /// A command typed wrong: how to type it (or what went wrong).
    Usage(String),
    /// `/cmd@otherbot`: addressed to another bot in the group; ignored.
    ForAnotherBot,
}

/// What a message asks of the gateway; `None` when it goes to the agent.
/// Typed text is read here; approval answers and menu commands come typed
/// from the adapters.
pub(crate) fn of(m: &Inbound) -> Option<Command> {
    match &m.action {
        Action::Text => parse(&m.text),
        Action::Decide { approval, choice } => Some(Command::Decide {
            id: approval.clone(),
            choice: *choice,
            reason: None,
        }),
        Action::Command { name, args } => {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            Some(command_of(CommandLine::of(name, &args)))
        }
    }
}

/// `None` when `text` is not a slash command (it goes to the agent).
pub(crate) fn parse(text: &str) -> Option<Command> {
    CommandLine::read(text).map(command_of)
}

/// The command the catalog read (`switchboard_core::CommandLine`).
fn command_of(line: CommandLine) -> Command {
    let i = match line {
        CommandLine::Known(i) => i,
        CommandLine::ForAnotherBot => return Command::ForAnotherBot,
        CommandLine::Unknown(name) => return Command::Unknown(name),
        CommandLine::Usage(how) => return Command::Usage(how),
    };
    let text = |name: &str| i.text(name).unwrap_or_default().to_string();
    let given = |name: &str| i.text(name).map(str::to_string);
    match i.id {
        CommandId::Help => Command::Help,
        CommandId::New => Command::New,
        CommandId::Status => Command::Status,
        CommandId::Agents => Command::Agents,
        CommandId::Tools => Command::Tools,
        CommandId::Skills => Command::Skills,
        CommandId::Model => Command::Model(given("name")),
        CommandId::Compact => Command::Compact(given("focus")),
        CommandId::Stop => Command::Stop,
        CommandId::Console => Command::Console,
        CommandId::Pair => Command::Pair(text("code")),
        CommandId::Unpair => Command::Unpair(text("id")),
        CommandId::People => Command::People,
        CommandId::Approve => Command::Decide {
            id: text("id"),
            choice: if i.flag("always") {
                ApprovalChoice::Always
            } else {
                ApprovalChoice::AllowOnce
            },
            reason: None,
        },
        CommandId::Deny => Command::Decide {
            id: text("id"),
            choice: ApprovalChoice::Deny,
            reason: given("reason"),
        },
        // The terminal chat reads `/attach` before it gets here.
        CommandId::Attach => Command::Unknown("attach".into()),
        CommandId::Subagents
        | CommandId::SubagentsList
        | CommandId::SubagentsInfo
        | CommandId::SubagentsLog
        | CommandId::SubagentsSend
        | CommandId::SubagentsKill
        | CommandId::SubagentsPause
        | CommandId::SubagentsResume => Command::Subagents(subagents::of(&i)),
    }
}

/// Run a command that needs no turn state.
pub(crate) async fn apply(command: &Command, ctx: &CommandContext<'_>) -> String {
    match command {
        Command::Help => help::apply(),
        Command::New => new::apply(ctx).await,
        Command::Status => status::apply(ctx).await,
        Command::Agents => agents::apply(ctx),
        Command::Tools => tools::apply(ctx).await,
        Command::Skills => skills::apply(ctx),
        Command::Model(name) => model::apply(ctx, name.as_deref()).await,
        Command::Compact(focus) => compact::apply(ctx, focus.as_deref()).await,
        Command::Subagents(sub) => subagents::apply(sub, ctx).await,
        Command::Stop => "Nothing is running.".into(),
        Command::Console => "Send /console to me in a direct message for a sign-in link.".into(),
        Command::Decide { id, .. } => {
            format!("No approval request '{id}' is waiting here.")
        }
        Command::Pair(_) | Command::Unpair(_) | Command::People => "Pairing is not available here.".into(),
        Command::Unknown(name) => format!("Unknown command /{name}. Type /help for the list."),
        Command::Usage(how) => format!("Usage: {how}"),
        Command::ForAnotherBot => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsing() {
        assert_eq!(parse("hello"), None);
        assert_eq!(parse("/help"), Some(Command::Help));
        // The adapter strips this bot's own name; another bot's stays.
        assert_eq!(parse("/status@other_bot"), Some(Command::ForAnotherBot));
        assert_eq!(parse("/stop@other_bot now"), Some(Command::ForAnotherBot));
        assert_eq!(
            parse("/approve ab12 always"),
            Some(Command::Decide {
                id: "ab12".into(),
                choice: ApprovalChoice::Always,
                reason: None
            })
        );
        assert_eq!(
            parse("/deny ab12 too risky"),
            Some(Command::Decide {
                id: "ab12".into(),
                choice: ApprovalChoice::Deny,
                reason: Some("too risky".into())
            })
        );
        assert_eq!(parse("/deny"), Some(Command::Usage("/deny <id> [reason]".into())));
        assert_eq!(parse("/frobnicate"), Some(Command::Unknown("frobnicate".into())));
    }

    /// Typed text, a menu pick and a press are one command each way.
    #[test]
    fn actions_are_the_same_commands_as_text() {
        let m = |text: &str, action: Action| Inbound {
            action,
            ..Inbound::new(ChatAddress::new("local.team", "c"), UserId("cli:ann".into()), text)
        };
        let press = Action::Decide {
            approval: "ab12".into(),
            choice: ApprovalChoice::Always,
        };
        assert_eq!(of(&m("", press)), parse("/approve ab12 always"));
        let menu = Action::Command {
            name: "subagents".into(),
            args: vec!["send".into(), "#2".into(), "look at the tests".into()],
        };
        assert_eq!(of(&m("", menu)), parse("/subagents send #2 look at the tests"));
        let deny = Action::Command {
            name: "deny".into(),
            args: vec!["ab12".into(), "too risky".into()],
        };
        assert_eq!(of(&m("", deny)), parse("/deny ab12 too risky"));
        assert_eq!(of(&m("hello", Action::Text)), None);
        // A press carries no text for the agent, whatever the text says.
        let press = Action::Decide {
            approval: "x1".into(),
            choice: ApprovalChoice::Deny,
        };
        assert!(matches!(of(&m("ignore me", press)), Some(Command::Decide { .. })));
    }
}
