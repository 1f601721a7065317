//! The fixture of the `sessions_spawn` tests: a main agent that may spawn
//! `worker` children, each on a scripted model of its own.
//! Each test file uses a part of it.
#![allow(dead_code)]

use crate::common::*;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use switchboard_core::ChatAddress;
use switchboard_runtime::{NoApprover, TurnRequest};
use switchboard_store::RunStatus;
use switchboard_store::Store;
use switchboard_test_support::ScriptedModel;

const AGENTS: &str = r#"
[agents.main]
model_provider = "pmain"
[agents.main.subagents]
allow_agents = ["worker"]
max_spawn_depth = 2
max_children_per_agent = 3
tools = { deny = ["shell"], allow = [] }
[agents.worker]
model_provider = "pwork"
[agents.other]
model_provider = "pwork"
[risk_profiles.default]
level = "full"
"#;

pub(crate) struct Fx {
    pub(crate) main: ScriptedModel,
    pub(crate) work: ScriptedModel,
    pub(crate) h: Harness,
}

/// The fixture, with `extra` appended to the configuration.
pub(crate) async fn fx(extra: &str) -> Fx {
    fx_edited(|toml| format!("{toml}{extra}")).await
}

/// The fixture, with its configuration changed by `edit`.
pub(crate) async fn fx_edited(edit: impl Fn(String) -> String) -> Fx {
    let (main, work) = (ScriptedModel::start().await, ScriptedModel::start().await);
    let toml = edit(format!(
        "{}{}{AGENTS}",
        provider("pmain", &main.url(), ""),
        provider("pwork", &work.url(), "")
    ));
    let h = harness(&toml).await;
    Fx { main, work, h }
}

impl Fx {
    pub(crate) async fn turn(&self, text: &str) -> String {
        self.h
            .runtime
            .run_turn(TurnRequest {
                origin: Some(ChatAddress::new("local.team", "general").with_thread(Some("t1".into()))),
                sender: Some("cli:bob".into()),
                ..TurnRequest::new(
                    "main",
                    "agent:main:local.team:general:t1",
                    text,
                    Arc::new(NoApprover("none".into())),
                )
            })
            .await
            .unwrap()
            .text
    }

    pub(crate) fn store(&self) -> &Store {
        self.h.runtime.store()
    }

    pub(crate) async fn wait_ended(&self, run_id: &str) -> String {
        for _ in 0..200 {
            let r = self.store().runs().get(run_id).await.unwrap().unwrap();
            if r.status != RunStatus::Running && !self.store().outbox().of_run(run_id).await.unwrap().is_empty() {
                return r.status.to_string();
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("run {run_id} did not end");
    }
}

/// The run id and session key of an accepted `sessions_spawn`.
pub(crate) fn accepted(tool_result: &str) -> (String, String) {
    let v: Value = serde_json::from_str(tool_result).unwrap();
    assert_eq!(v["status"], "accepted", "{tool_result}");
    (
        v["runId"].as_str().unwrap().to_string(),
        v["childSessionKey"].as_str().unwrap().to_string(),
    )
}
