//! `/subagents`: see and steer the child runs of this chat, read from the
//! run registry. `<id|#>` is the index shown by `list`, a run id prefix or
//! a label.

mod info;
mod kill;
mod list;
mod log;
mod pause;
pub(crate) use pause::{flag as pause_flag, set_paused};
pub(crate) mod send;

use super::CommandContext;
use switchboard_core::{CommandId, Invocation};
use switchboard_store::{RunRow, now_ms};

/// How far back `list` looks for finished children.
const RECENT_MS: i64 = 30 * 60 * 1000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Sub {
    List,
    Info(String),
    Log {
        target: String,
        limit: usize,
        tools: bool,
    },
    Kill(String),
    Send {
        target: String,
        message: String,
    },
    /// `pause` (this chat's agent) or `pause all`.
    Pause {
        all: bool,
    },
    Resume {
        all: bool,
    },
}

/// The sub-command the catalog read (`/subagents` alone lists).
pub(crate) fn of(i: &Invocation) -> Sub {
    let target = || i.text("id").unwrap_or_default().to_string();
    match i.id {
        CommandId::SubagentsInfo => Sub::Info(target()),
        CommandId::SubagentsLog => Sub::Log {
            target: target(),
            limit: i.number("limit").map_or(20, |n| n.clamp(1, 200) as usize),
            tools: i.flag("tools"),
        },
        CommandId::SubagentsKill => Sub::Kill(target()),
        CommandId::SubagentsSend => Sub::Send {
            target: target(),
            message: i.text("message").unwrap_or_default().to_string(),
        },
        CommandId::SubagentsPause => Sub::Pause { all: i.flag("all") },
        CommandId::SubagentsResume => Sub::Resume { all: i.flag("all") },
        _ => Sub::List,
    }
}

pub(crate) async fn apply(sub: &Sub, ctx: &CommandContext<'_>) -> String {
    match sub {
        Sub::List => list::apply(ctx).await,
        Sub::Info(t) => info::apply(ctx, t).await,
        Sub::Log { target, limit, tools } => log::apply(ctx, target, *limit, *tools).await,
        Sub::Kill(t) => kill::apply(ctx, t).await,
        Sub::Send { target, message } => send::apply(ctx, target, message).await,
        Sub::Pause { all } => pause::apply(ctx, true, *all).await,
        Sub::Resume { all } => pause::apply(ctx, false, *all).await,
    }
}

/// This chat's children, in `list` order, as the command's sender could
/// see them: runs started after the command was taken are left out, so a
/// command handled again after a restart (`kill all`, `kill 3`) never hits
/// a run that did not exist when it was typed.
pub(crate) async fn children(ctx: &CommandContext<'_>) -> Result<Vec<RunRow>, String> {
    let mut rows = ctx
        .runtime
        .store()
        .runs()
        .in_chat(
            &ctx.address.channel,
            &ctx.address.chat,
            ctx.runtime.store().now_ms() - RECENT_MS,
            100,
        )
        .await
        .map_err(|e| {
            tracing::error!(error = %e, "cannot read the run registry");
            "The run registry could not be read (storage error).".to_string()
        })?;
    rows.retain(|r| r.created_at <= ctx.sent_at);
    Ok(rows)
}

/// Resolve `#3`, `3`, a run id prefix or a label.
pub(crate) async fn resolve(ctx: &CommandContext<'_>, target: &str) -> Result<RunRow, String> {
    let rows = children(ctx).await?;
    let index = target.trim_start_matches('#').parse::<usize>().ok();
    let found = match index {
        Some(i) if i >= 1 && i <= rows.len() => Some(rows[i - 1].clone()),
        _ => rows
            .iter()
            .find(|r| target.len() >= 4 && r.id.starts_with(target))
            .or_else(|| rows.iter().find(|r| r.label.as_deref() == Some(target)))
            .cloned(),
    };
    found.ok_or_else(|| format!("No subagent '{target}' in this chat. /subagents list shows them."))
}

pub(crate) fn runtime_of(r: &RunRow) -> String {
    let end = r.ended_at.unwrap_or_else(now_ms);
    let s = ((end - r.started_at.unwrap_or(r.created_at)) / 1000).max(0);
    if s < 60 {
        format!("{s}s")
    } else {
        format!("{}m{:02}s", s / 60, s % 60)
    }
}

pub(crate) fn tokens_of(r: &RunRow) -> String {
    format!("{} in / {} out", r.tokens_in, r.tokens_out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsing() {
        let sub = |text: &str| match crate::commands::parse(text) {
            Some(crate::commands::Command::Subagents(s)) => s,
            other => panic!("{text}: {other:?}"),
        };
        assert_eq!(sub("/subagents"), Sub::List);
        assert_eq!(sub("/subagents info #2"), Sub::Info("#2".into()));
        assert_eq!(
            sub("/subagents log ab12 50 tools"),
            Sub::Log {
                target: "ab12".into(),
                limit: 50,
                tools: true
            }
        );
        assert_eq!(
            sub("/subagents log ab12 999"),
            Sub::Log {
                target: "ab12".into(),
                limit: 200,
                tools: false
            }
        );
        assert_eq!(sub("/subagents kill all"), Sub::Kill("all".into()));
        for wrong in ["/subagents kill", "/subagents explode"] {
            assert!(
                matches!(crate::commands::parse(wrong), Some(crate::commands::Command::Usage(_))),
                "{wrong}"
            );
        }
    }

    /// A `/subagents kill` taken before a run started (and handled only
    /// after a restart) does not reach that run.
    #[tokio::test]
    async fn commands_see_only_runs_older_than_themselves() {
        let peers = crate::test_peers::team_channel().await;
        let config = switchboard_config::Config::from_toml_str(
            &format!(
                "workspace_dir = \"{}\"\n[providers.p]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9\"\nmodel = \"m\"\n[agents.main]\nmodel_provider = \"p\"\n",
                peers._dir.path().join("ws").display()
            ),
            "test",
        )
        .unwrap();
        let runtime = switchboard_runtime::Runtime::new(std::sync::Arc::new(config), peers.store.clone()).unwrap();
        let address = switchboard_core::ChatAddress::new("local.team", "general");
        let sender = switchboard_core::UserId("cli:ann".into());
        let run = |id: &str| switchboard_store::NewRun {
            id: id.into(),
            kind: switchboard_store::RunKind::SpawnSubagent,
            parent_id: None,
            root_id: id.into(),
            owner_chain: vec!["main".into()],
            depth: 1,
            agent: "main".into(),
            session_key: format!("child:{id}"),
            origin_channel: Some("local.team".into()),
            origin_chat: Some("general".into()),
            origin_thread: None,
            label: None,
            task: Some("work".into()),
            model: None,
            requester: Some("cli:ann".into()),
            requester_session: None,
            announce: false,
        };
        let old = peers.store.runs().insert(&run("older-run")).await.unwrap();
        let sent_at = old + 1;
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        peers.store.runs().insert(&run("newer-run")).await.unwrap();
        let ctx = CommandContext {
            runtime: &runtime,
            agent: "main",
            session_key: "s",
            address: &address,
            sender: &sender,
            sent_at,
            route: None,
        };
        let seen: Vec<String> = children(&ctx).await.unwrap().into_iter().map(|r| r.id).collect();
        assert_eq!(seen, ["older-run"]);
        assert_eq!(resolve(&ctx, "1").await.unwrap().id, "older-run");
        assert!(
            resolve(&ctx, "2").await.is_err(),
            "the newer run is not #2 for this command"
        );
        assert!(resolve(&ctx, "newer").await.is_err());
        let now = CommandContext {
            sent_at: now_ms(),
            ..ctx
        };
        assert_eq!(resolve(&now, "2").await.unwrap().id, "newer-run");
    }
}
