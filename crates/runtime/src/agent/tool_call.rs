//! One tool call: argument parsing, the duplicate guard, the approval gate,
//! the hourly action budget, and execution.

use super::{AgentRun, TurnEvent};
use crate::approval::{ApprovalOutcome, ApprovalRequest};
use crate::message::{ChatMessage, ToolCall};
use crate::policy::{GateDecision, Rated, gate, is_dangerous_for_child};
use crate::redact::summarize_args;
use crate::tools::{Tool, ToolResult};
use parking_lot::Mutex;
use serde_json::Value;
use std::collections::HashSet;
use std::sync::Arc;

/// Tools that always run, even when called twice with the same arguments.
const NEVER_DEDUPLICATED: &[&str] = &["spawn_subagent", "delegate", "sessions_spawn"];

impl AgentRun {
    /// The tool `call` names and its arguments as a JSON object, unless
    /// the tool is not offered, the arguments do not parse, or the same
    /// call was already made this turn.
    fn admit(&self, call: &ToolCall, seen: &Mutex<HashSet<String>>) -> Result<(Arc<dyn Tool>, Value), ToolResult> {
        let Some(tool) = self.registry.get(&call.name) else {
            if call.name == "spawn_subagent" {
                return Err(ToolResult::fail(crate::policy::spawn_refused_by_profile(
                    &self.ctx.agent,
                )));
            }
            return Err(ToolResult::fail(format!(
                "unknown tool '{}'; available tools: {}",
                call.name,
                self.registry.model_names().join(", ")
            )));
        };
        let raw = if call.arguments.trim().is_empty() {
            "{}"
        } else {
            call.arguments.as_str()
        };
        let args: Value = match serde_json::from_str(raw) {
            Ok(v @ Value::Object(_)) => v,
            Ok(_) => {
                return Err(ToolResult::fail(format!(
                    "arguments for {} must be a JSON object",
                    call.name
                )));
            }
            Err(e) => {
                return Err(ToolResult::fail(format!(
                    "malformed JSON arguments for {}: {e}; send one JSON object matching the tool's schema",
                    call.name
                )));
            }
        };
        if !NEVER_DEDUPLICATED.contains(&call.name.as_str()) {
            // By the tool's own name: the same call under its other name is the same call.
            let key = format!("{}\u{0}{}", tool.name(), args);
            if !seen.lock().insert(key) {
                return Err(ToolResult::fail(format!(
                    "skipped: an identical {} call was already made in this turn; use its result",
                    call.name
                )));
            }
        }
        Ok((tool.clone(), args))
    }

    /// The approval gate's decision for `call`, and whether it is a
    /// dangerous command in a child run: such a command is asked for every
    /// time (no "always" grant covers it, and it never makes one).
    fn gate_call(&self, tool: &dyn Tool, args: &Value, effect: crate::policy::Risk) -> (GateDecision, bool) {
        let (profile_name, profile) = (&self.approval_profile.0, &self.approval_profile.1);
        let is_shell = tool.name() == "shell";
        let kind = if is_shell {
            Rated::Command
        } else if tool.risk_rated() {
            Rated::ByRisk
        } else {
            Rated::No
        };
        let decision = gate(profile_name, profile, tool.name(), effect, kind);
        if !self.ctx.scope.is_child() || !is_shell || matches!(decision, GateDecision::Refuse(_)) {
            return (decision, false);
        }
        let command = args.get("command").and_then(Value::as_str).unwrap_or("");
        if !is_dangerous_for_child(command) || profile.subagent_auto_approve {
            return (decision, false);
        }
        let operator_route = profile
            .approval_route
            .as_ref()
            .is_some_and(switchboard_config::ApprovalRoute::is_complete);
        let decision = if operator_route {
            GateDecision::Ask
        } else {
            GateDecision::Refuse(crate::policy::Refusal::new(
                "shell refused: a dangerous command in a child run, with no operator to approve it. Do not retry it; say so in your result.".into(),
                format!("set [risk_profiles.{profile_name}].subagent_auto_approve = true or route approvals to an operator"),
            ))
        };
        (decision, true)
    }

    /// The refusal's words for the model; its fix goes to the operators
    /// (once per agent and change).
    fn refused(&self, tool: &str, why: crate::policy::Refusal) -> ToolResult {
        let agent = &self.ctx.agent;
        let subject = format!("{tool}: {}", why.fix);
        let text = format!("Agent {agent} was refused a {tool} call. To allow it, {}.", why.fix);
        self.ctx.host.tell_operators(agent, &subject, text);
        ToolResult::fail(why.said)
    }

    pub(crate) async fn run_call(&self, call: &ToolCall, seen: &Mutex<HashSet<String>>) -> (ChatMessage, bool) {
        let result = self.evaluate(call, seen).await;
        tracing::info!(tool = %call.name, success = result.success, "tool call finished");
        (ChatMessage::tool_result(call, result.to_model_text()), result.success)
    }

    async fn evaluate(&self, call: &ToolCall, seen: &Mutex<HashSet<String>>) -> ToolResult {
        let (tool, args) = match self.admit(call, seen) {
            Ok(found) => found,
            Err(refused) => return refused,
        };
        let risk = tool.effect(&args).at_least_low().as_str();
        let span = tracing::info_span!("tool_call", tool = tool.name(), risk, outcome = tracing::field::Empty);
        let (result, outcome) = tracing::Instrument::instrument(self.gated(tool.as_ref(), args), span.clone()).await;
        span.record("outcome", outcome);
        switchboard_telemetry::metrics::tool_call(&tool.metric_label(), risk, outcome);
        result
    }

    /// Run an admitted call through the gate (and an approval when asked
    /// for); its result and how it ended, in a word for metrics.
    async fn gated(&self, tool: &dyn Tool, args: Value) -> (ToolResult, &'static str) {
        let effect = tool.effect(&args);
        let policy = &self.ctx.policy;
        let summary = summarize_args(&args);
        let (decision, dangerous) = self.gate_call(tool, &args, effect);
        // People and the configuration know a tool by its own name (an MCP
        // tool's `server.tool`), the model by the name it called.
        let name = tool.name();
        if let GateDecision::Refuse(why) = decision {
            return (self.refused(name, why), "refused");
        }
        // Work another gateway adopted is neither asked about nor run (and
        // asked again after an approval, which may have taken minutes).
        if let Some(refused) = self.fenced(name, effect).await {
            return (refused, "refused");
        }
        let mut asked = false;
        match decision {
            GateDecision::Refuse(why) => return (self.refused(name, why), "refused"),
            GateDecision::Ask if dangerous || !self.grants.has(name, effect.at_least_low()) => {
                asked = true;
                let outcome = self.ask(name, &summary, effect.at_least_low()).await;
                match outcome {
                    ApprovalOutcome::Approved { always, .. } => {
                        if always && !dangerous {
                            self.grants.grant(name, effect.at_least_low());
                        }
                    }
                    other => {
                        return (ToolResult::fail(other.refusal_text(name).unwrap_or_default()), "denied");
                    }
                }
            }
            _ => {}
        }
        if !policy.tracker.try_record_capped(policy.hourly_cap) {
            return (
                self.refused(
                    "actions",
                    crate::policy::Refusal::new(
                        format!(
                            "action budget spent: {} actions in the last hour; no more tool calls can run for now. Tell the user to try again later.",
                            policy.tracker.limit()
                        ),
                        format!("raise [runtime_profiles.{}].max_actions_per_hour", self.agent.config.runtime_profile),
                    ),
                ),
                "refused",
            );
        }
        self.emit(TurnEvent::ToolStarted {
            name: name.to_string(),
            summary,
        });
        if asked && let Some(refused) = self.fenced(name, effect).await {
            return (refused, "refused");
        }
        let progress = self.ctx.scope.progress.clone();
        if let Some(p) = &progress {
            p.tool_started(name).await;
        }
        // Tools honour `ctx.cancel` themselves (shell kills its process,
        // child runs end as cancelled), so each can record how it ended.
        let result = tool.execute(args, &self.ctx).await;
        if let Some(p) = &progress {
            p.tool_finished(name, result.success).await;
        }
        self.emit(TurnEvent::ToolFinished {
            name: name.to_string(),
            success: result.success,
        });
        let outcome = if result.success { "ok" } else { "error" };
        (result, outcome)
    }

    /// The refusal of a side-effecting call for work this gateway no longer
    /// owns (see `crate::fence`); the turn is cancelled with it.
    async fn fenced(&self, tool: &str, effect: crate::policy::Risk) -> Option<ToolResult> {
        if effect == crate::policy::Risk::Read {
            return None;
        }
        let fence = self.ctx.host.fence()?;
        let work = crate::fence::Work {
            turn: self.turn.as_deref(),
            run: self.ctx.scope.run_id.as_deref(),
        };
        let why = fence.still_ours(work).await.err()?;
        tracing::error!(tool, %why, "a tool call for work another gateway adopted was not run");
        self.ctx.cancel.cancel();
        Some(ToolResult::fail(format!("{tool} was not run: {why}")))
    }

    async fn ask(&self, tool: &str, summary: &str, risk: crate::policy::Risk) -> ApprovalOutcome {
        let (profile_name, profile) = (&self.approval_profile.0, &self.approval_profile.1);
        let route = profile.approval_route.clone();
        let scope = &self.ctx.scope;
        let mut timeout_secs = route.as_ref().map(|r| r.timeout_secs).unwrap_or(120);
        if let Some(deadline) = scope.deadline {
            let left = deadline
                .saturating_duration_since(tokio::time::Instant::now())
                .as_secs();
            timeout_secs = timeout_secs.min(left.max(1));
        }
        let caller_chain = if scope.owner_chain.len() > 1 {
            scope.owner_chain.clone()
        } else {
            Vec::new()
        };
        let request = ApprovalRequest {
            id: short_id(),
            agent: self.ctx.agent.clone(),
            caller_chain,
            tool: tool.to_string(),
            summary: summary.to_string(),
            risk,
            profile_name: profile_name.clone(),
            route,
            origin: scope.origin.clone(),
            requested_by: scope.requester.clone(),
            run_id: scope.run_id.clone(),
            originator_may_decide: !scope.is_child(),
            timeout_secs,
        };
        switchboard_telemetry::metrics::approval_requested();
        let asked_at = std::time::Instant::now();
        let span = tracing::info_span!(
            "approval_wait",
            tool,
            risk = risk.as_str(),
            outcome = tracing::field::Empty
        );
        let wait = async {
            tokio::select! {
                o = self.broker.request(request) => o,
                _ = self.ctx.cancel.cancelled() => ApprovalOutcome::Unavailable { why: "the turn was cancelled".into() },
            }
        };
        let outcome = tracing::Instrument::instrument(wait, span.clone()).await;
        let word = match &outcome {
            ApprovalOutcome::Approved { .. } => "approved",
            ApprovalOutcome::Denied { .. } => "denied",
            ApprovalOutcome::TimedOut { .. } => "expired",
            _ => "unavailable",
        };
        span.record("outcome", word);
        switchboard_telemetry::metrics::approval_decided(word, asked_at.elapsed().as_secs_f64());
        outcome
    }
}

/// Approval ids are typed by people (`/approve 3f9a2c`): short but unique enough.
fn short_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..8].to_string()
}
