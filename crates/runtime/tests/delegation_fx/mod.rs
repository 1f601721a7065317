//! The fixture of the `delegate` tests. Each test file uses a part of it.
#![allow(dead_code)]

use crate::common::*;
use serde_json::Value;
use std::sync::Arc;
use switchboard_runtime::NoApprover;
use switchboard_test_support::{ScriptedModel, Step};

/// Three agents on scripted models: `main` (may delegate), `reviewer`
/// (same profile) and `ops` (independent, its own profile).
pub(crate) struct Fx {
    pub(crate) main: ScriptedModel,
    pub(crate) reviewer: ScriptedModel,
    pub(crate) ops: ScriptedModel,
    pub(crate) h: Harness,
}

pub(crate) const AGENTS: &str = r#"
[agents.main]
model_provider = "pmain"
risk_profile = "lead"
delegates = [{ agent = "ops", mode = "independent" }]

[agents.reviewer]
model_provider = "prev"
risk_profile = "lead"

[agents.ops]
model_provider = "pops"
risk_profile = "opsprof"

[risk_profiles.lead]
level = "full"
delegation_policy = { mode = "allow" }
excluded_tools = ["shell"]

[risk_profiles.opsprof]
level = "full"
allowed_commands = ["echo"]
"#;

/// The fixture, with `extra` configuration and `mutate` applied.
pub(crate) async fn fx_with(extra: &str, mutate: impl FnOnce(&mut switchboard_config::Config)) -> Fx {
    let main = ScriptedModel::start().await;
    let reviewer = ScriptedModel::start().await;
    let ops = ScriptedModel::start().await;
    let toml = format!(
        "{}{}{}{AGENTS}{extra}",
        provider("pmain", &main.url(), ""),
        provider("prev", &reviewer.url(), ""),
        provider("pops", &ops.url(), "")
    );
    let h = harness_with(&toml, mutate).await;
    Fx { main, reviewer, ops, h }
}

/// The fixture, with `extra` configuration.
pub(crate) async fn fx(extra: &str) -> Fx {
    fx_with(extra, |_| {}).await
}

impl Fx {
    /// One main turn that makes exactly one delegate call with `args`, then
    /// ends; returns the tool result the main model saw.
    pub(crate) async fn delegate(&self, args: Value) -> String {
        self.main.push(Step::tool_call("delegate", args));
        self.main.push(Step::text("done"));
        self.h.turn("go", Arc::new(NoApprover("none".into()))).await.unwrap();
        last_tool_result(&self.main)
    }

    /// The same, the turn run in session `session` of `main`, asked for by
    /// person tg:42.
    pub(crate) async fn delegate_in(&self, session: &str, args: Value) -> String {
        self.main.push(Step::tool_call("delegate", args));
        self.main.push(Step::text("done"));
        let mut turn =
            switchboard_runtime::TurnRequest::new("main", session, "go", Arc::new(NoApprover("none".into())));
        turn.sender = Some("tg:42".into());
        self.h.runtime.run_turn(turn).await.unwrap();
        last_tool_result(&self.main)
    }
}

/// A complete approval route: cli:alice decides in the ops room.
pub(crate) fn ops_room_route() -> switchboard_config::ApprovalRoute {
    switchboard_config::ApprovalRoute {
        approver_channel: Some("cli".into()),
        approver_recipient: Some("ops-room".into()),
        approvers: vec!["cli:alice".into()],
        on_no_approver: Default::default(),
        timeout_secs: 5,
        ..Default::default()
    }
}

/// A tool result reporting `s` as an error.
pub(crate) fn error(s: &str) -> String {
    format!("Error: {s}")
}
