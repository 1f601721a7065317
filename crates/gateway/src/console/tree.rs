//! The run tree the console shows: per chat, the person's turns running
//! now (from the router) and the registry runs (from the store) nested
//! under the run that started them.

use super::Console;
use crate::messages::router::TurnNow;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};
use switchboard_core::ChatAddress;
use switchboard_store::{RunRow, RunStatus, StoreError, now_ms};

/// How far back ended runs are shown.
const RECENT_MS: i64 = 24 * 60 * 60 * 1000;
/// At most this many runs are read for one page.
const MAX_RUNS: i64 = 2000;

/// One registry run and the runs it started.
pub(crate) struct RunNode {
    pub(crate) row: RunRow,
    /// A tool call of this run waits for an approval.
    pub(crate) waiting: bool,
    pub(crate) children: Vec<RunNode>,
}

/// What a run's progress object says (counters and tool names only).
#[derive(Default)]
pub(crate) struct ProgressView {
    pub(crate) iterations: u64,
    pub(crate) tokens_in: u64,
    pub(crate) tokens_out: u64,
    /// The current (not finished) or last tool.
    pub(crate) tool: Option<(String, bool)>,
}

impl RunNode {
    /// `running`, `waiting for approval`, `done`, `failed`, `cancelled`,
    /// `timed out` or `lost`.
    pub(crate) fn status_label(&self) -> &'static str {
        match self.row.status {
            RunStatus::Running if self.waiting => "waiting for approval",
            RunStatus::Running => "running",
            RunStatus::Completed => "done",
            RunStatus::Failed => "failed",
            RunStatus::Cancelled => "cancelled",
            RunStatus::TimedOut => "timed out",
            RunStatus::Lost => "lost",
        }
    }

    /// How long it ran (or has run so far), in ms.
    pub(crate) fn elapsed_ms(&self) -> i64 {
        let start = self.row.started_at.unwrap_or(self.row.created_at);
        self.row.ended_at.unwrap_or_else(now_ms) - start
    }

    pub(crate) fn progress(&self) -> ProgressView {
        progress_of(self.row.progress.as_deref())
    }

    /// This run and every descendant.
    #[cfg(test)]
    pub(crate) fn count(&self) -> usize {
        1 + self.children.iter().map(RunNode::count).sum::<usize>()
    }
}

/// Read a stored progress object.
pub(crate) fn progress_of(json: Option<&str>) -> ProgressView {
    let Some(v) = json.and_then(|j| serde_json::from_str::<Value>(j).ok()) else {
        return ProgressView::default();
    };
    let n = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
    let tool = v.get("last_tool").and_then(|t| {
        let name = t.get("name")?.as_str()?.to_string();
        Some((name, t.get("finished_at").is_none_or(Value::is_null)))
    });
    ProgressView {
        iterations: n("iterations"),
        tokens_in: n("tokens_in"),
        tokens_out: n("tokens_out"),
        tool,
    }
}

/// A person's turn running now, with the runs it started so far.
pub(crate) struct TurnNode {
    pub(crate) turn: TurnNow,
    pub(crate) runs: Vec<RunNode>,
}

/// One chat's turns and runs.
#[derive(Default)]
pub(crate) struct ChatGroup {
    /// `channel:chat#thread`.
    pub(crate) chat: String,
    pub(crate) turns: Vec<TurnNode>,
    /// Runs whose turn has ended (or that no turn started: cron).
    pub(crate) runs: Vec<RunNode>,
}

/// The whole tree: chats with something running first, then by name.
pub(crate) async fn collect(console: &Console) -> Result<Vec<ChatGroup>, StoreError> {
    let store = console.runtime.store();
    let rows = store.runs().recent(store.now_ms() - RECENT_MS, MAX_RUNS).await?;
    let waiting: HashSet<String> = store
        .approvals()
        .pending()
        .await?
        .into_iter()
        .filter_map(|a| a.run_id)
        .collect();
    Ok(group(rows, &waiting, console.router.running_turns()))
}

/// Nest `rows` under their parents and group them (and `turns`) by chat.
pub(crate) fn group(rows: Vec<RunRow>, waiting: &HashSet<String>, turns: Vec<TurnNow>) -> Vec<ChatGroup> {
    let ids: HashSet<String> = rows.iter().map(|r| r.id.clone()).collect();
    let mut by_parent: HashMap<Option<String>, Vec<RunRow>> = HashMap::new();
    for r in rows {
        // A parent outside the window shows its child at the top.
        let parent = r.parent_id.clone().filter(|p| ids.contains(p));
        by_parent.entry(parent).or_default().push(r);
    }
    fn build(row: RunRow, by_parent: &mut HashMap<Option<String>, Vec<RunRow>>, waiting: &HashSet<String>) -> RunNode {
        let mut kids = by_parent.remove(&Some(row.id.clone())).unwrap_or_default();
        kids.sort_by_key(|k| k.created_at);
        RunNode {
            waiting: waiting.contains(&row.id),
            children: kids.into_iter().map(|k| build(k, by_parent, waiting)).collect(),
            row,
        }
    }
    let mut tops = by_parent.remove(&None).unwrap_or_default();
    tops.sort_by_key(|r| std::cmp::Reverse(r.created_at));
    let mut chats: BTreeMap<String, ChatGroup> = BTreeMap::new();
    let mut turn_nodes: Vec<TurnNode> = turns
        .into_iter()
        .map(|turn| TurnNode { turn, runs: Vec::new() })
        .collect();
    for top in tops {
        let chat = chat_of(&top);
        // A run the session's running turn asked for hangs under it.
        let owner = turn_nodes.iter_mut().find(|t| {
            top.requester_session.as_deref() == Some(t.turn.session_key.as_str()) && top.created_at >= t.turn.started_at
        });
        let node = build(top, &mut by_parent, waiting);
        match owner {
            Some(t) => t.runs.push(node),
            None => chats
                .entry(chat.clone())
                .or_insert_with(|| ChatGroup {
                    chat,
                    ..Default::default()
                })
                .runs
                .push(node),
        }
    }
    for t in turn_nodes {
        let chat = t.turn.address.to_string();
        chats
            .entry(chat.clone())
            .or_insert_with(|| ChatGroup {
                chat,
                ..Default::default()
            })
            .turns
            .push(t);
    }
    let mut groups: Vec<ChatGroup> = chats.into_values().collect();
    groups.sort_by_key(|g| {
        let live = !g.turns.is_empty() || g.runs.iter().any(|r| r.row.status == RunStatus::Running);
        (!live, g.chat.clone())
    });
    groups
}

/// The chat a run was asked from, written as its address is (the same
/// text a running turn's address gives, so both land in one group).
fn chat_of(r: &RunRow) -> String {
    match (&r.origin_channel, &r.origin_chat) {
        (Some(ch), Some(chat)) => ChatAddress::new(ch.clone(), chat.clone())
            .with_thread(r.origin_thread.clone())
            .to_string(),
        _ => "(no chat: scheduled or internal)".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_store::RunKind;

    fn row(id: &str, parent: Option<&str>, status: RunStatus, created_at: i64) -> RunRow {
        RunRow {
            id: id.into(),
            kind: RunKind::Delegate,
            parent_id: parent.map(Into::into),
            root_id: parent.unwrap_or(id).into(),
            owner_chain: Vec::new(),
            depth: 1,
            agent: "main".into(),
            session_key: format!("s:{id}"),
            origin_channel: Some("local.team".into()),
            origin_chat: Some("general".into()),
            origin_thread: None,
            label: None,
            task: None,
            model: None,
            status,
            heartbeat_at: None,
            progress: Some(r#"{"iterations":3,"tokens_in":40,"tokens_out":9,"last_tool":{"name":"shell","started_at":1,"finished_at":null,"success":null}}"#.into()),
            created_at,
            started_at: Some(created_at),
            ended_at: None,
            tokens_in: 0,
            tokens_out: 0,
            cost_micros: 0,
            output: None,
            error: None,
            requester: Some("cli:bob".into()),
            requester_session: None,
            instance_id: None,
        }
    }

    #[test]
    fn runs_nest_under_their_parents_and_group_by_chat() {
        let rows = vec![
            row("a", None, RunStatus::Running, 1),
            row("b", Some("a"), RunStatus::Running, 2),
            row("c", Some("b"), RunStatus::Completed, 3),
            row("orphan", Some("gone"), RunStatus::Failed, 4),
        ];
        let waiting = HashSet::from(["b".to_string()]);
        let groups = group(rows, &waiting, Vec::new());
        assert_eq!(groups.len(), 1);
        assert_eq!(groups[0].chat, "local.team:general");
        let tops: Vec<&str> = groups[0].runs.iter().map(|n| n.row.id.as_str()).collect();
        assert_eq!(
            tops,
            ["orphan", "a"],
            "newest first; a child whose parent is not shown is at the top"
        );
        let a = &groups[0].runs[1];
        assert_eq!(a.count(), 3);
        assert_eq!(a.children[0].status_label(), "waiting for approval");
        assert_eq!(a.children[0].children[0].status_label(), "done");
        let p = a.progress();
        assert_eq!((p.iterations, p.tokens_in, p.tokens_out), (3, 40, 9));
        assert_eq!(p.tool, Some(("shell".to_string(), true)));
    }
}
