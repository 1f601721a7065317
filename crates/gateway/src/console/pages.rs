//! The console's pages (GET handlers). Each reads what it shows from the
//! store, the router and the runtime's public API, and renders it with the
//! viewer's rights: buttons appear only where the viewer may act (the
//! actions check again).

use super::auth::Viewer;
use super::tree::{self, ChatGroup, RunNode};
use super::view::{self, Chrome, Tab};
use super::{Console, unavailable};
use crate::rights;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use serde::Deserialize;
use serde_json::Value;
use std::sync::Arc;
use switchboard_core::ApprovalChoice;
use switchboard_store::{ApprovalStatus, RunStatus, now_ms, utc_day};

pub(super) fn chrome<'a>(console: &Console, viewer: &'a Viewer) -> Chrome<'a> {
    Chrome {
        user: viewer.user.as_str(),
        csrf: viewer.csrf(),
        paused: console.runtime.core().live().is_paused_everywhere(),
        operator: rights::may_pause(&console.runtime.config(), &viewer.user, rights::PauseScope::All),
    }
}

/// `GET /console`: the live run tree.
pub(crate) async fn runs(State(console): State<Arc<Console>>, viewer: Viewer) -> Response {
    match tree::collect(&console).await {
        Ok(groups) => {
            let body = html! {
                h1 { "Runs" }
                section #live data-fragment="/console/fragment/runs" { (tree_html(&console, &viewer, &groups)) }
            };
            view::page("Runs", Tab::Runs, &chrome(&console, &viewer), body).into_response()
        }
        Err(e) => unavailable(&e),
    }
}

/// `GET /console/fragment/runs`: the tree alone, for live refresh.
pub(crate) async fn runs_fragment(State(console): State<Arc<Console>>, viewer: Viewer) -> Response {
    match tree::collect(&console).await {
        Ok(groups) => tree_html(&console, &viewer, &groups).into_response(),
        Err(e) => unavailable(&e),
    }
}

/// The tree's markup.
pub(crate) fn tree_html(console: &Console, viewer: &Viewer, groups: &[ChatGroup]) -> Markup {
    let now = console.runtime.store().now_ms();
    html! {
        @if groups.is_empty() { p.empty { "Nothing has run in the last 24 hours." } }
        @for g in groups {
            section.chat {
                h2 { (g.chat) }
                ul.tree {
                    @for t in &g.turns {
                        li.turn.status-running data-session=(t.turn.session_key) data-status="running" {
                            div.row {
                                span.kind { "turn" }
                                span.agent { (t.turn.agent) }
                                span.status { "running" }
                                span.elapsed { (view::elapsed(now - t.turn.started_at)) }
                                span.by { "asked by " (t.turn.owner) }
                                @if !t.turn.route.is_empty() { span.route title="why this agent answers here" { "via " (t.turn.route) } }
                                @if rights::may_stop(&console.runtime.config(), &viewer.user, &t.turn.owner, &t.turn.agent) {
                                    button.act.danger data-post="/console/turns/stop" data-body=(t.turn.session_key) { "Stop" }
                                }
                            }
                            @if !t.runs.is_empty() {
                                ul.tree { @for n in &t.runs { (run_html(console, viewer, n)) } }
                            }
                        }
                    }
                    @for n in &g.runs { (run_html(console, viewer, n)) }
                }
            }
        }
    }
}

fn run_html(console: &Console, viewer: &Viewer, n: &RunNode) -> Markup {
    let r = &n.row;
    let p = n.progress();
    let status = n.status_label();
    let class = format!("run status-{}", status.replace(' ', "-"));
    let may_kill = r.status == RunStatus::Running
        && rights::may_kill(&console.runtime.config(), &viewer.user, &rights::RunOwner::of(r));
    html! {
        li class=(class) data-run=(r.id) data-status=(status) {
            div.row {
                span.kind { (r.kind.as_str()) }
                a.agent href={ "/console/runs/" (r.id) } { (r.agent) }
                span.status { (status) }
                span.elapsed title="elapsed" { (view::elapsed(n.elapsed_ms())) }
                @if let Some((tool, current)) = &p.tool {
                    span.tool title=(if *current { "current tool" } else { "last tool" }) {
                        @if *current { "▶ " } (tool)
                    }
                }
                span.iter title="model calls" { (p.iterations) " it" }
                span.tokens title="tokens in / out" {
                    (p.tokens_in.max(r.tokens_in as u64)) " / " (p.tokens_out.max(r.tokens_out as u64)) " tok"
                }
                @if r.cost_micros > 0 { span.cost { (view::dollars(r.cost_micros)) } }
                @if let Some(label) = &r.label { span.label { (label) } }
                @if may_kill {
                    button.act.danger data-post={ "/console/runs/" (r.id) "/kill" } data-confirm="Kill this run and its children?" { "Kill" }
                }
            }
            @if !n.children.is_empty() {
                ul.tree { @for c in &n.children { (run_html(console, viewer, c)) } }
            }
        }
    }
}

/// `GET /console/runs/{id}`: one run, its progress and its transcript.
pub(crate) async fn run(State(console): State<Arc<Console>>, viewer: Viewer, Path(id): Path<String>) -> Response {
    let store = console.runtime.store();
    let row = match store.runs().get(&id).await {
        Ok(Some(r)) => r,
        Ok(None) => {
            return (
                StatusCode::NOT_FOUND,
                view::message_page("No such run", "That run is not in the registry."),
            )
                .into_response();
        }
        Err(e) => return unavailable(&e),
    };
    let messages = match store.sessions().history(&row.session_key, 200).await {
        Ok(m) => m,
        Err(e) => return unavailable(&e),
    };
    let node = RunNode {
        waiting: false,
        children: Vec::new(),
        row,
    };
    let r = &node.row;
    let progress: Value = r
        .progress
        .as_deref()
        .and_then(|p| serde_json::from_str(p).ok())
        .unwrap_or(Value::Null);
    let may_kill = r.status == RunStatus::Running
        && rights::may_kill(&console.runtime.config(), &viewer.user, &rights::RunOwner::of(r));
    let body = html! {
        h1 { (r.kind.as_str()) " · " (r.agent) }
        dl.facts {
            dt { "Run" } dd { code { (r.id) } }
            dt { "Status" } dd data-status=(node.status_label()) { (node.status_label()) }
            dt { "Started" } dd { (view::time(r.started_at.unwrap_or(r.created_at))) }
            dt { "Elapsed" } dd { (view::elapsed(node.elapsed_ms())) }
            dt { "Asked by" } dd { (r.requester.as_deref().unwrap_or("—")) }
            dt { "Model" } dd { (r.model.as_deref().unwrap_or("—")) }
            @let p = node.progress();
            dt { "Tokens" } dd { (p.tokens_in.max(r.tokens_in as u64)) " in / " (p.tokens_out.max(r.tokens_out as u64)) " out" }
            dt { "Cost" } dd { (view::dollars(r.cost_micros)) }
            @if let Some(t) = &r.task { dt { "Task" } dd { (t) } }
            @if let Some(e) = &r.error { dt { "Error" } dd.error { (e) } }
        }
        @if may_kill {
            p { button.act.danger data-post={ "/console/runs/" (r.id) "/kill" } data-confirm="Kill this run and its children?" { "Kill run and children" } }
        }
        h2 { "Progress" }
        pre.progress { (serde_json::to_string_pretty(&progress).unwrap_or_default()) }
        h2 { "Transcript" }
        ol.transcript {
            @for m in &messages { (message_html(&m.role, &m.body)) }
        }
    };
    view::page("Run", Tab::Runs, &chrome(&console, &viewer), body).into_response()
}

/// How much of a tool result or message the transcript shows.
const CUT: usize = 600;

fn cut(text: &str) -> String {
    let mut out: String = text.chars().take(CUT).collect();
    if text.chars().count() > CUT {
        out.push_str(" …");
    }
    out
}

fn message_html(role: &str, body: &str) -> Markup {
    let v: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let content = v.get("content").and_then(Value::as_str).unwrap_or_default();
    let calls = v
        .get("tool_calls")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    html! {
        li class={ "msg role-" (role) } {
            span.role {
                (role)
                @if let Some(n) = v.get("name").and_then(Value::as_str) { " · " (n) }
                @if let Some(n) = v.get("replaces").and_then(Value::as_u64) { " · in place of " (n) " earlier messages" }
            }
            @if !content.is_empty() { div.text { (cut(&switchboard_runtime::redact::redact_text(content))) } }
            @for c in &calls {
                div.call {
                    "→ " (c.get("name").and_then(Value::as_str).unwrap_or("?")) " "
                    code { (cut(&switchboard_runtime::redact::redact_text(c.get("arguments").and_then(Value::as_str).unwrap_or_default()))) }
                }
            }
        }
    }
}

/// Filters of the approvals audit.
#[derive(Deserialize, Default)]
pub(crate) struct AuditFilter {
    #[serde(default)]
    agent: Option<String>,
    /// `YYYY-MM-DD`.
    #[serde(default)]
    day: Option<String>,
}

/// `GET /console/approvals`: what waits, and what was decided.
pub(crate) async fn approvals(
    State(console): State<Arc<Console>>,
    viewer: Viewer,
    Query(filter): Query<AuditFilter>,
) -> Response {
    let store = console.runtime.store();
    let (pending, recent) = match (store.approvals().pending().await, store.approvals().recent(1000).await) {
        (Ok(p), Ok(r)) => (p, r),
        (Err(e), _) | (_, Err(e)) => return unavailable(&e),
    };
    let agent = filter.agent.as_deref().filter(|a| !a.is_empty());
    let day = filter.day.as_deref().filter(|d| !d.is_empty());
    let audit: Vec<_> = recent
        .into_iter()
        .filter(|a| a.status != ApprovalStatus::Pending)
        .filter(|a| agent.is_none_or(|x| a.agent == x))
        .filter(|a| day.is_none_or(|d| utc_day(a.created_at) == d))
        .take(200)
        .collect();
    let config = console.runtime.config();
    let agents: Vec<&String> = config.agents.keys().collect();
    let body = html! {
        h1 { "Approvals" }
        section #live data-fragment="/console/fragment/approvals" { (pending_html(&viewer, &pending, console.runtime.store().now_ms())) }
        h2 { "Audit trail" }
        form.filters method="get" {
            label { "Agent " select name="agent" {
                option value="" { "any" }
                @for a in &agents { option value=(a) selected[agent == Some(a.as_str())] { (a) } }
            } }
            label { "Day " input type="date" name="day" value=(day.unwrap_or_default()); }
            button type="submit" { "Filter" }
        }
        div.scroll { table.audit {
            thead { tr { th { "Request" } th { "Agent" } th { "Tool" } th { "Outcome" } th { "By" } th { "From" } th { "When" } } }
            tbody {
                @for a in &audit {
                    tr data-approval=(a.id) {
                        td { code { (a.id) } }
                        td { (a.agent) }
                        td { (a.tool) }
                        td { (a.status.as_str()) }
                        td { (a.decided_by.as_deref().unwrap_or("—")) }
                        td { (a.decided_from.as_deref().unwrap_or("—")) }
                        td { (view::time(a.decided_at.unwrap_or(a.created_at))) }
                    }
                }
            }
        } }
        @if audit.is_empty() { p.empty { "No decided or expired request matches." } }
    };
    view::page("Approvals", Tab::Approvals, &chrome(&console, &viewer), body).into_response()
}

/// `GET /console/fragment/approvals`: the pending list alone.
pub(crate) async fn approvals_fragment(State(console): State<Arc<Console>>, viewer: Viewer) -> Response {
    match console.runtime.store().approvals().pending().await {
        Ok(p) => pending_html(&viewer, &p, console.runtime.store().now_ms()).into_response(),
        Err(e) => unavailable(&e),
    }
}

fn pending_html(viewer: &Viewer, pending: &[switchboard_store::ApprovalRow], now: i64) -> Markup {
    html! {
        h2 { "Waiting (" (pending.len()) ")" }
        @if pending.is_empty() { p.empty { "No request is waiting." } }
        ul.pending {
            @for a in pending {
                @let approvers = rights::approvers_of(a);
                li.approval data-approval=(a.id) {
                    div.row {
                        code { (a.id) }
                        span.agent { (a.agent) }
                        span.tool { (a.tool) }
                        span { "risk " (a.risk) }
                        span.left title="time left" { (view::elapsed(a.deadline_at - now)) " left" }
                    }
                    div.summary { (a.summary) }
                    div.meta {
                        "asked by " (a.requested_by.as_deref().unwrap_or("(scheduled)"))
                        @if !a.caller_chain.is_empty() { " via " (a.caller_chain.join(" > ")) }
                        @if let (Some(ch), Some(chat)) = (&a.channel, &a.chat) { " · prompt in " (ch) ":" (chat) }
                        " · approvers " (approvers.join(", "))
                    }
                    @if rights::may_decide(&viewer.user, &approvers) {
                        div.buttons {
                            @for choice in ApprovalChoice::ALL {
                                button class={ "act decide " (choice.word()) } data-post={ "/console/approvals/" (a.id) "/decide" } data-body=(choice.word()) { (choice.label()) }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// `GET /console/costs`: today and this month, per agent and per provider.
pub(crate) async fn costs(State(console): State<Arc<Console>>, viewer: Viewer) -> Response {
    let store = console.runtime.store();
    let today = utc_day(now_ms());
    let month = today[..7].to_string();
    let mut tables = Vec::new();
    for (label, prefix) in [("Today", today.as_str()), ("This month", month.as_str())] {
        let (agents, providers) = match store.costs().breakdown(prefix).await {
            Ok(b) => b,
            Err(e) => return unavailable(&e),
        };
        let attributed = match store.costs().attributed_breakdown(prefix).await {
            Ok(a) => a,
            Err(e) => return unavailable(&e),
        };
        tables.push((label, prefix == today.as_str(), agents, providers, attributed));
    }
    let config = &console.runtime.config();
    let body = html! {
        h1 { "Costs" }
        @for (label, is_today, agents, providers, attributed) in &tables {
            @let total: i64 = agents.iter().map(|(_, c)| c.cost_micros).sum();
            @let limit = if *is_today { config.cost.daily_limit_usd } else { config.cost.monthly_limit_usd };
            section.costs data-period=(if *is_today { "today" } else { "month" }) {
                h2 { (label) ": " span.total data-micros=(total) { (view::dollars(total)) }
                    @if limit > 0.0 { " of " (format!("${limit:.2}")) " limit" } }
                div.scroll { table {
                    thead { tr { th { "Agent" } th { "Calls" } th { "Tokens in / out" } th { "Own spend" } th { "With children" } @if *is_today { th { "Daily cap" } } } }
                    tbody { @for (agent, c) in agents {
                        @let with_children = attributed.iter().find(|(a, _)| a == agent).map_or(c.cost_micros, |(_, m)| *m.max(&c.cost_micros));
                        @let cap = config.runtime_profile_of(agent).max_cost_per_day_cents;
                        tr data-agent=(agent) {
                            td { (agent) } td { (c.calls) } td { (c.tokens_in) " / " (c.tokens_out) }
                            td.own data-micros=(c.cost_micros) { (view::dollars(c.cost_micros)) }
                            td { (view::dollars(with_children)) }
                            @if *is_today { td { @if cap > 0 { (view::dollars(cap as i64 * 10_000)) } @else { "none" } } }
                        }
                    } }
                } }
                div.scroll { table {
                    thead { tr { th { "Provider" } th { "Calls" } th { "Tokens in / out" } th { "Spend" } } }
                    tbody { @for (provider, c) in providers {
                        tr data-provider=(provider) {
                            td { (provider) } td { (c.calls) } td { (c.tokens_in) " / " (c.tokens_out) }
                            td data-micros=(c.cost_micros) { (view::dollars(c.cost_micros)) }
                        }
                    } }
                } }
            }
        }
        p.note { "“With children” is what counts against an agent's daily cap: its own spend and that of the bounded delegates it started." }
    };
    view::page("Costs", Tab::Costs, &chrome(&console, &viewer), body).into_response()
}

/// `GET /console/health`: channels, outbox backlog and model providers.
pub(crate) async fn health(State(console): State<Arc<Console>>, viewer: Viewer) -> Response {
    let backlog = match console.runtime.store().outbox().pending().await {
        Ok(n) => n,
        Err(e) => return unavailable(&e),
    };
    let config = &console.runtime.config();
    let channels: Vec<(String, bool)> = config.channels.instances();
    let providers = switchboard_runtime::provider::provider_health();
    let now = now_ms();
    let body = html! {
        h1 { "Health" }
        h2 { "Channels" }
        div.scroll { table.health {
            thead { tr { th { "Channel" } th { "State" } th { "Since" } th { "Last error" } } }
            tbody { @for (name, enabled) in &channels {
                @let state = console.health.state(name);
                @let label = if !enabled { "disabled" } else { state.as_ref().map_or("no report yet", |s| s.label()) };
                tr data-channel=(name) {
                    td { (name) }
                    td class={ "state " (label.replace(' ', "-")) } { (label) }
                    td { @if let Some(s) = &state { (view::time(s.since)) " (" (view::elapsed(now - s.since)) " ago)" } }
                    td { @if let Some((at, e)) = state.as_ref().and_then(|s| s.last_error.clone()) { (view::time(at)) ": " (e) } }
                }
            } }
        } }
        h2 { "Outbox" }
        p { span #backlog { (backlog) } " replies and announcements waiting for delivery." }
        h2 { "Model providers" }
        div.scroll { table {
            thead { tr { th { "Provider" } th { "Last answer" } th { "Last error" } } }
            tbody { @for name in config.providers.keys() {
                @let h = providers.get(name).cloned().unwrap_or_default();
                tr data-provider=(name) {
                    td { (name) }
                    td { @if let Some(t) = h.last_ok_at { (view::time(t)) } @else { "none yet" } }
                    td { @if let Some((at, e)) = &h.last_error { (view::time(*at)) ": " (e) } @else { "none" } }
                }
            } }
        } }
    };
    view::page("Health", Tab::Health, &chrome(&console, &viewer), body).into_response()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_compaction_note_says_what_it_stands_for() {
        let body = r#"{"role":"summary","content":"Ann's locker code is 4711.","replaces":12}"#;
        let html = super::message_html("summary", body).into_string();
        assert!(html.contains("role-summary"), "{html}");
        assert!(html.contains("in place of 12 earlier messages"), "{html}");
        assert!(html.contains("locker code is 4711"), "{html}");
    }
}
